"""Events keep their standings (TournamentStandings, computed when results
come in) and count their results; each rated match says in what order its
ratings were applied (Match.rating_sequence, the first id of its
RatingChange rows, which are in that order). Existing rows are filled in:
the standings of an event already under way are computed by the next
periodic sweep (their stored count, 0, is behind)."""

import django.db.models.deletion
from django.db import migrations, models


def fill_in(apps, schema_editor):
    from django.db.models import Min, OuterRef, Subquery

    Match = apps.get_model("ladder", "Match")
    RatingChange = apps.get_model("ladder", "RatingChange")
    Tournament = apps.get_model("ladder", "Tournament")
    TournamentStandings = apps.get_model("ladder", "TournamentStandings")
    first_change = RatingChange.objects.filter(match=OuterRef("pk")).values("match").annotate(first=Min("id")).values("first")
    Match.objects.filter(rating_changes__isnull=False).update(rating_sequence=Subquery(first_change))
    for t in Tournament.objects.all():
        t.results_recorded = Match.objects.filter(tournament_slot__tournament=t, status__in=["finished", "failed"]).count()
        t.save(update_fields=["results_recorded"])
        TournamentStandings.objects.get_or_create(tournament=t)


class Migration(migrations.Migration):

    dependencies = [
        ('ladder', '0003_verified_email'),
    ]

    operations = [
        migrations.CreateModel(
            name='TournamentStandings',
            fields=[
                ('tournament', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='stored_standings', serialize=False, to='ladder.tournament')),
                ('document', models.JSONField(default=dict)),
                ('results', models.PositiveIntegerField(default=0)),
                ('computed', models.DateTimeField(blank=True, null=True)),
                ('compute_ms', models.PositiveIntegerField(default=0)),
                ('not_before', models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.AddField(
            model_name='match',
            name='rating_sequence',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='tournament',
            name='results_recorded',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill_in, migrations.RunPython.noop),
    ]
