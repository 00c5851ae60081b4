from django.apps import AppConfig


class DownloadsConfig(AppConfig):
    name = "example_project.django_site.downloads"
    label = "downloads"

    def ready(self) -> None:
        from example_project.files import ensure_files

        ensure_files()  # the small files and the sparse 64 MiB one, in the default storage's location
