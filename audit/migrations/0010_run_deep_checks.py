from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0009_answer_json"),
    ]

    operations = [
        migrations.AddField(
            model_name="verificationrun",
            name="deep_checks",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
