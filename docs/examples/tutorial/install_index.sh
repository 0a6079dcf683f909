# The same install from a package index, once django-mcp is published there:
pip install 'django-mcp[drf,channels]'
