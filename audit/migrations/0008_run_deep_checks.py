from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0007_run_verification_profile"),
    ]

    operations = [
        migrations.AddField(
            model_name="verificationrun",
            name="deep_checks",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
