# The worker heartbeat's sandbox text now names the limits in force (issue 10).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ladder', '0003_standings_index'),
    ]

    operations = [
        migrations.AlterField(
            model_name='workerheartbeat',
            name='sandbox',
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
