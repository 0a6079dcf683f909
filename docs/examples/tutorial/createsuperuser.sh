python manage.py createsuperuser  # asks for a username, an email and a password
