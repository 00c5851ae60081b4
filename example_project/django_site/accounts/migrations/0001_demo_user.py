"""The demo user (demo / demo), made when the start command applies migrations."""

from django.contrib.auth.hashers import make_password
from django.db import migrations

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo"


def create_demo_user(apps, schema_editor):  # type: ignore[no-untyped-def]
    user_model = apps.get_model("auth", "User")
    if not user_model.objects.filter(username=DEMO_USERNAME).exists():
        user_model.objects.create(username=DEMO_USERNAME, password=make_password(DEMO_PASSWORD))


def remove_demo_user(apps, schema_editor):  # type: ignore[no-untyped-def]
    apps.get_model("auth", "User").objects.filter(username=DEMO_USERNAME).delete()


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]  # noqa: RUF012
    operations = [migrations.RunPython(create_demo_user, remove_demo_user)]  # noqa: RUF012
