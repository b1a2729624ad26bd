"""Recompute every username claim's skeleton: the separators _ . @ + - are
left out of it now (decision 192), so "alice_" and "a.lice" are "alice".

A live account's skeleton is computed from its name. A deleted account's
name is a tombstone, but its claim keeps the name it had from being taken
again: its stored skeleton, separators taken out, is exactly the new one
(the separators are taken out last). Where two older names only now look
alike, the older account keeps the skeleton and the other its folded name
alone, as migration 0002 did: both keep working as they are."""

from django.db import migrations


def recompute(apps, schema_editor):
    # The live function, not a frozen copy: what a claim must hold is the
    # skeleton check_username compares with.
    from ladder.services.accounts import SEPARATORS, skeleton, tombstone_name

    UsernameClaim = apps.get_model("ladder", "UsernameClaim")
    claims = list(UsernameClaim.objects.select_related("user").order_by("user_id"))
    # Out of the way first (brackets are in no skeleton), so that no new
    # value meets an old one still stored under the unique constraint.
    for claim in claims:
        UsernameClaim.objects.filter(pk=claim.pk).update(skeleton=f"[recomputing-{claim.pk}]")
    taken = set()
    for claim in claims:
        if claim.skeleton.startswith("[unclaimed-"):
            shape = claim.skeleton
        elif claim.user.username == tombstone_name(claim.user_id):
            shape = claim.skeleton.translate(str.maketrans("", "", SEPARATORS))
        else:
            shape = skeleton(claim.user.username)
        if not shape or shape in taken:
            shape = f"[unclaimed-{claim.pk}]"
        taken.add(shape)
        UsernameClaim.objects.filter(pk=claim.pk).update(skeleton=shape)


class Migration(migrations.Migration):
    dependencies = [("ladder", "0008_casual_matches")]
    operations = [migrations.RunPython(recompute, migrations.RunPython.noop)]
