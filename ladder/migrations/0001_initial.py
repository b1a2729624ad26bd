"""The whole schema in one migration (squashed from the parallel branches'
0001-0007 before the first deployment), and the database cache's tables
(the rate limits' and the shared caches' default on SQLite and PostgreSQL)."""

import django.db.models.deletion
import django.db.models.functions.text
from decimal import Decimal
from django.conf import settings
from django.core.management import call_command
from django.db import migrations, models


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Ladder',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=80, unique=True)),
                ('game', models.CharField(choices=[('allegory', 'Allegory'), ('allegra', 'Allegra')], max_length=16)),
                ('players_per_match', models.PositiveSmallIntegerField()),
                ('options', models.JSONField(blank=True, default=dict)),
                ('startup_ms', models.PositiveIntegerField(default=10000)),
                ('per_move_ms', models.PositiveIntegerField(default=1000)),
                ('overage_ms', models.PositiveIntegerField(default=10000)),
                ('total_ms', models.PositiveIntegerField(default=300000)),
                ('active', models.BooleanField(default=True)),
                ('created', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'ordering': ['game', 'players_per_match', 'name'],
            },
        ),
        migrations.CreateModel(
            name='UsernameClaim',
            fields=[
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='username_claim', serialize=False, to=settings.AUTH_USER_MODEL)),
                ('folded', models.CharField(max_length=600, unique=True)),
                ('skeleton', models.CharField(max_length=600, unique=True)),
            ],
        ),
        migrations.CreateModel(
            name='Bot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('game', models.CharField(choices=[('allegory', 'Allegory'), ('allegra', 'Allegra')], max_length=16)),
                ('name', models.CharField(max_length=40)),
                ('description', models.TextField(blank=True, max_length=2000)),
                ('builtin', models.BooleanField(default=False, help_text="one of cardroom's own bots")),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('withdrawn', models.DateTimeField(blank=True, null=True)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='bots', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['game', 'name'],
            },
        ),
        migrations.CreateModel(
            name='BotVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('package', models.FileField(upload_to='bots/%Y/%m/')),
                ('filename', models.CharField(max_length=200)),
                ('sha256', models.CharField(db_index=True, max_length=64)),
                ('size', models.PositiveIntegerField()),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('validating', 'Validating'), ('active', 'Active'), ('failed', 'Failed'), ('retired', 'Retired')], db_index=True, default='pending', max_length=12)),
                ('validation_log', models.TextField(blank=True)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('activated', models.DateTimeField(blank=True, null=True)),
                ('bot', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='versions', to='ladder.bot')),
            ],
            options={
                'ordering': ['bot', '-number'],
            },
        ),
        migrations.AddField(
            model_name='bot',
            name='current_version',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='ladder.botversion'),
        ),
        migrations.CreateModel(
            name='Match',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('ladder', 'Ladder'), ('validation', 'Validation'), ('tournament', 'Tournament')], default='ladder', max_length=12)),
                ('game', models.CharField(choices=[('allegory', 'Allegory'), ('allegra', 'Allegra')], max_length=16)),
                ('options', models.JSONField(blank=True, default=dict)),
                ('num_players', models.PositiveSmallIntegerField()),
                ('seed', models.BigIntegerField()),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('finished', 'Finished'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=12)),
                ('attempts', models.PositiveSmallIntegerField(default=0)),
                ('lease_token', models.CharField(blank=True, max_length=64)),
                ('lease_expires', models.DateTimeField(blank=True, null=True)),
                ('worker', models.CharField(blank=True, max_length=200)),
                ('error', models.TextField(blank=True, help_text="the last platform failure (never a bot's)")),
                ('error_kind', models.CharField(blank=True, db_index=True, max_length=32)),
                ('replay', models.FileField(blank=True, upload_to='replays/%Y/%m/')),
                ('num_events', models.PositiveIntegerField(blank=True, null=True)),
                ('created', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('enqueued', models.DateTimeField(blank=True, null=True)),
                ('started', models.DateTimeField(blank=True, null=True)),
                ('finished', models.DateTimeField(blank=True, db_index=True, null=True)),
                ('ladder', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='matches', to='ladder.ladder')),
                ('validation_of', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='validation_matches', to='ladder.botversion')),
            ],
            options={
                'ordering': ['-id'],
            },
        ),
        migrations.CreateModel(
            name='Participant',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seat', models.PositiveSmallIntegerField()),
                ('score', models.IntegerField(blank=True, null=True)),
                ('rank', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('forfeit_reason', models.CharField(blank=True, max_length=32)),
                ('forfeit_event', models.PositiveIntegerField(blank=True, null=True)),
                ('forfeit_detail', models.TextField(blank=True)),
                ('log', models.FileField(blank=True, upload_to='logs/%Y/%m/')),
                ('log_size', models.PositiveIntegerField(default=0)),
                ('elo_before', models.DecimalField(blank=True, decimal_places=2, max_digits=9, null=True)),
                ('elo_after', models.DecimalField(blank=True, decimal_places=2, max_digits=9, null=True)),
                ('mu_before', models.FloatField(blank=True, null=True)),
                ('mu_after', models.FloatField(blank=True, null=True)),
                ('sigma_before', models.FloatField(blank=True, null=True)),
                ('sigma_after', models.FloatField(blank=True, null=True)),
                ('worker_ms', models.PositiveIntegerField(blank=True, null=True)),
                ('bot', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='participations', to='ladder.bot')),
                ('match', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participants', to='ladder.match')),
                ('version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='participations', to='ladder.botversion')),
            ],
            options={
                'ordering': ['match', 'seat'],
            },
        ),
        migrations.CreateModel(
            name='Rating',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('elo', models.DecimalField(decimal_places=2, default=Decimal('1500.00'), max_digits=9)),
                ('mu', models.FloatField()),
                ('sigma', models.FloatField()),
                ('ordinal', models.FloatField(db_index=True, help_text="OpenSkill's conservative estimate, mu - 3 sigma")),
                ('games', models.PositiveIntegerField(default=0)),
                ('wins', models.PositiveIntegerField(default=0)),
                ('forfeits', models.PositiveIntegerField(default=0)),
                ('provisional', models.BooleanField(default=True)),
                ('version_games', models.PositiveIntegerField(default=0)),
                ('last_played', models.DateTimeField(blank=True, null=True)),
                ('bot', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='ratings', to='ladder.bot')),
                ('ladder', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='ratings', to='ladder.ladder')),
                ('version', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='ladder.botversion')),
            ],
        ),
        migrations.CreateModel(
            name='RatingChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('elo_before', models.DecimalField(decimal_places=2, max_digits=9)),
                ('elo_after', models.DecimalField(decimal_places=2, max_digits=9)),
                ('mu_before', models.FloatField()),
                ('mu_after', models.FloatField()),
                ('sigma_before', models.FloatField()),
                ('sigma_after', models.FloatField()),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('match', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rating_changes', to='ladder.match')),
                ('participant', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='rating_change', to='ladder.participant')),
                ('rating', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='changes', to='ladder.rating')),
                ('version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='ladder.botversion')),
            ],
            options={
                'ordering': ['id'],
            },
        ),
        migrations.CreateModel(
            name='Tournament',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=80, unique=True)),
                ('game', models.CharField(choices=[('allegory', 'Allegory'), ('allegra', 'Allegra')], max_length=16)),
                ('format', models.CharField(choices=[('round-robin', 'Round Robin'), ('swiss', 'Swiss'), ('duplicate', 'Duplicate')], max_length=16)),
                ('table_size', models.PositiveSmallIntegerField()),
                ('deals', models.PositiveIntegerField()),
                ('rounds', models.PositiveIntegerField(blank=True, help_text='asked for (Swiss, or a balanced round-robin)', null=True)),
                ('seed', models.BigIntegerField()),
                ('options', models.JSONField(blank=True, default=dict)),
                ('startup_ms', models.PositiveIntegerField(default=10000)),
                ('per_move_ms', models.PositiveIntegerField(default=1000)),
                ('overage_ms', models.PositiveIntegerField(default=10000)),
                ('total_ms', models.PositiveIntegerField(default=300000)),
                ('pairing', models.CharField(max_length=12)),
                ('num_rounds', models.PositiveIntegerField()),
                ('total_matches', models.PositiveIntegerField()),
                ('batches_scheduled', models.PositiveIntegerField(default=0)),
                ('status', models.CharField(choices=[('running', 'Running'), ('paused', 'Paused'), ('finished', 'Finished'), ('cancelled', 'Cancelled')], db_index=True, default='running', max_length=12)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-id'],
            },
        ),
        migrations.CreateModel(
            name='TournamentEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('index', models.PositiveIntegerField()),
                ('bot', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='ladder.bot')),
                ('tournament', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entries', to='ladder.tournament')),
                ('version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='ladder.botversion')),
            ],
            options={
                'ordering': ['tournament', 'index'],
            },
        ),
        migrations.CreateModel(
            name='TournamentMatch',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('round', models.PositiveIntegerField()),
                ('table', models.PositiveIntegerField()),
                ('deal', models.PositiveIntegerField()),
                ('rotation', models.PositiveSmallIntegerField()),
                ('seats', models.JSONField(help_text='entry index by seat')),
                ('keyed_chance', models.BooleanField(default=False, help_text='duplicate: one chance stream per kind')),
                ('match', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='tournament_slot', to='ladder.match')),
                ('tournament', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='schedule', to='ladder.tournament')),
            ],
            options={
                'ordering': ['tournament', 'number'],
            },
        ),
        migrations.CreateModel(
            name='WorkerHeartbeat',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200, unique=True)),
                ('hostname', models.CharField(max_length=200)),
                ('pid', models.PositiveIntegerField()),
                ('started', models.DateTimeField()),
                ('last_seen', models.DateTimeField(db_index=True)),
                ('matches_done', models.PositiveIntegerField(default=0)),
                ('sandbox', models.CharField(blank=True, max_length=200)),
                ('current_match', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='ladder.match')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.AddConstraint(
            model_name='botversion',
            constraint=models.UniqueConstraint(fields=('bot', 'number'), name='version_number_unique_per_bot'),
        ),
        migrations.AddConstraint(
            model_name='bot',
            constraint=models.UniqueConstraint(fields=('game', 'name'), name='bot_name_unique_per_game'),
        ),
        migrations.AddConstraint(
            model_name='bot',
            constraint=models.UniqueConstraint(django.db.models.functions.text.Lower('name'), models.F('game'), name='bot_name_unique_per_game_ci'),
        ),
        migrations.AddIndex(
            model_name='match',
            index=models.Index(fields=['status', 'lease_expires'], name='match_status_lease'),
        ),
        migrations.AddIndex(
            model_name='match',
            index=models.Index(fields=['ladder', 'status', '-id'], name='match_ladder_status'),
        ),
        migrations.AddConstraint(
            model_name='match',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['validation', 'tournament']), ('ladder__isnull', False), _connector='OR'), name='ladder_match_has_ladder'),
        ),
        migrations.AddIndex(
            model_name='participant',
            index=models.Index(fields=['bot', '-match'], name='participant_bot_match'),
        ),
        migrations.AddConstraint(
            model_name='participant',
            constraint=models.UniqueConstraint(fields=('match', 'seat'), name='one_participant_per_seat'),
        ),
        migrations.AddIndex(
            model_name='rating',
            index=models.Index(fields=['ladder', '-elo', '-ordinal', 'bot'], name='rating_standings_order'),
        ),
        migrations.AddConstraint(
            model_name='rating',
            constraint=models.UniqueConstraint(fields=('ladder', 'bot'), name='one_rating_per_ladder_and_bot'),
        ),
        migrations.AddIndex(
            model_name='ratingchange',
            index=models.Index(fields=['rating', 'id'], name='ratingchange_rating'),
        ),
        migrations.AddConstraint(
            model_name='tournamententry',
            constraint=models.UniqueConstraint(fields=('tournament', 'index'), name='one_entry_per_index'),
        ),
        migrations.AddConstraint(
            model_name='tournamentmatch',
            constraint=models.UniqueConstraint(fields=('tournament', 'number'), name='one_match_per_number'),
        ),
        migrations.RunPython(create_cache_tables, migrations.RunPython.noop),
    ]
