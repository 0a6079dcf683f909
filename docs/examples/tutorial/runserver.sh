python manage.py runserver  # "Starting ASGI/Daphne ... development server at http://127.0.0.1:8000/"
