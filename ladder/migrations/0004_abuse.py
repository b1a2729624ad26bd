"""One identity per name, and the shared store of the rate limits.

Existing data is kept, and every change is printed (decisions.md, "Abuse"):
- bots whose names differ only in case within a game: the oldest keeps its
  name, each later one is renamed to "<name>-<id>" so the case-insensitive
  constraint can be added;
- users: each gets a UsernameClaim, oldest first; an account whose name folds
  to (or looks like) an older one's keeps its name and can still sign in,
  but holds no claim (it is listed, for the operator to rename if wanted).
- the "limits" cache's table, when that cache is the database cache."""

import django.db.models.deletion
import django.db.models.functions.text
from django.conf import settings
from django.core.management import call_command
from django.db import migrations, models


def rename_case_duplicate_bots(apps, schema_editor):
    Bot = apps.get_model("ladder", "Bot")
    seen: dict[tuple[str, str], int] = {}
    for bot in Bot.objects.order_by("id").only("id", "game", "name"):
        key = (bot.game, bot.name.lower())
        if key not in seen:
            seen[key] = bot.id
            continue
        new_name = f"{bot.name[: 40 - len(str(bot.id)) - 1]}-{bot.id}"
        print(f"\n  ladder 0004: bot {bot.id} ({bot.game}) {bot.name!r} renamed to {new_name!r}: bot {seen[key]} has that name in another case")
        Bot.objects.filter(pk=bot.id).update(name=new_name)


def claim_existing_usernames(apps, schema_editor):
    from ladder.client import fold_username
    from ladder.services.accounts import skeleton

    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    UsernameClaim = apps.get_model("ladder", "UsernameClaim")
    folded_taken: dict[str, str] = {}
    skeleton_taken: dict[str, str] = {}
    claims = []
    for user in User.objects.order_by("id").only("id", "username"):
        folded, shape = fold_username(user.username), skeleton(user.username)
        older = folded_taken.get(folded) or skeleton_taken.get(shape)
        if older is not None:
            print(f"\n  ladder 0004: user {user.id} {user.username!r} is a look-alike or case variant of {older!r}: kept, without a claim")
            continue
        folded_taken[folded] = skeleton_taken[shape] = user.username
        claims.append(UsernameClaim(user_id=user.id, folded=folded, skeleton=shape))
    UsernameClaim.objects.bulk_create(claims, batch_size=1000)


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("ladder", "0003_standings_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(rename_case_duplicate_bots, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="bot",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("name"), models.F("game"), name="bot_name_unique_per_game_ci"
            ),
        ),
        migrations.CreateModel(
            name="UsernameClaim",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="username_claim",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("folded", models.CharField(max_length=600, unique=True)),
                ("skeleton", models.CharField(max_length=600, unique=True)),
            ],
        ),
        migrations.RunPython(claim_existing_usernames, migrations.RunPython.noop),
        migrations.RunPython(create_cache_tables, migrations.RunPython.noop),
    ]
