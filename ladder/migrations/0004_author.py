from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ladder', '0003_standings_index'),
    ]

    operations = [
        migrations.AddField(
            model_name='bot',
            name='withdrawn',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
