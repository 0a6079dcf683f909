"""Task state of the Tasks extension: the model, its store and the execution engine seam.

The work itself runs as a Django Tasks job (``django.tasks`` on Django 6, the
``django-tasks`` backport on 5.2); this package keeps what MCP clients see of it.
"""
