"""Rewrite the casual replays of the accounts deleted before deletion did
it (decision 191): their replays still name the person as they were
called. Each is rewritten as a deletion now does (the tombstone in the
person's seat, a new file, the old one removed once this commits)."""

from django.db import migrations


def rename(apps, schema_editor):
    # The live service, not a frozen copy: it is what a deletion runs now.
    # (A fresh database has no deleted account, and nothing to do.)
    from django.contrib.auth import get_user_model

    from ladder import caching
    from ladder.services.accounts import rename_in_replays, tombstone_name

    renamed = []
    for user in get_user_model().objects.filter(username__startswith="[deleted-", is_active=False).order_by("pk"):
        if user.username == tombstone_name(user.pk):
            renamed += rename_in_replays(user)
    if renamed:
        caching.bump(caching.PEOPLE)
        caching.forget_replays(renamed)


class Migration(migrations.Migration):
    dependencies = [("ladder", "0009_username_skeleton_separators")]
    operations = [migrations.RunPython(rename, migrations.RunPython.noop)]
