from __future__ import annotations

from decimal import Decimal

from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=200)

    def __str__(self) -> str:
        return self.name


class Book(models.Model):
    isbn = models.CharField("ISBN", max_length=13, unique=True, help_text="13-digit ISBN.")
    title = models.CharField(max_length=300)
    author = models.ForeignKey(Author, on_delete=models.PROTECT, related_name="books")
    price = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0"))
    published = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title
