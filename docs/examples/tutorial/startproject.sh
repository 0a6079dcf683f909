django-admin startproject bookshop .
python manage.py startapp books
