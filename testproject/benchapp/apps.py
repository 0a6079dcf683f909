from django.apps import AppConfig


class BenchAppConfig(AppConfig):
    name = "testproject.benchapp"
    label = "benchapp"
    verbose_name = "Benchmark fixtures"
