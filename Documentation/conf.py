# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration for `make htmldocs`. The kernel-doc extension and
# the kernel-doc script come from linux-source-6.1 (extracted into
# build/ksrc by tools/deps), as for Documentation/ in the kernel tree.

import os
import sys

top = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
ksrc = os.environ.get('KSRC', os.path.join(top, 'build', 'ksrc'))
sys.path.insert(0, os.path.join(ksrc, 'Documentation', 'sphinx'))

project = 'iWARP MPA and DDP for Linux'
copyright = 'The iWARP MPA/DDP authors'
master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = ['output']

extensions = ['kerneldoc']
kerneldoc_bin = os.path.join(ksrc, 'scripts', 'kernel-doc')
kerneldoc_srctree = top
kerneldoc_verbosity = 0

# Attributes the C domain must accept in kernel prototypes.
c_id_attributes = ['__user', '__iomem', '__rcu', '__force', '__must_check',
		   '__printf', '__always_inline', 'noinline']

primary_domain = 'c'
highlight_language = 'none'
html_theme = 'sphinx_rtd_theme'
html_show_sphinx = False
