# An empty folder, a virtualenv, and django-mcp from your checkout of it, with the
# extras this tutorial uses: [drf] for ModelTools, [channels] for Daphne's runserver.
mkdir bookshop && cd bookshop
python3 -m venv .venv
. .venv/bin/activate
pip install -e '/path/to/django-mcp[drf,channels]'
pip install pytest-django 'mcp==2.3.0'  # to test the tools, and the official SDK client
