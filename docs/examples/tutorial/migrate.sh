python manage.py makemigrations books
python manage.py migrate
python manage.py loaddata books
