"""Recompute every username claim's skeleton: i, l, 1 and | became one class
after case folding (decision 79), so names stored before look different now."""

from django.db import migrations


def recompute(apps, schema_editor):
    # The live function, not a frozen copy: what a claim must hold is the
    # skeleton check_username compares with.
    from ladder.services.accounts import skeleton

    UsernameClaim = apps.get_model("ladder", "UsernameClaim")
    claims = list(UsernameClaim.objects.select_related("user").order_by("user_id"))
    # Out of the way first (brackets are in no skeleton), so that no new
    # value meets an old one still stored under the unique constraint.
    for claim in claims:
        UsernameClaim.objects.filter(pk=claim.pk).update(skeleton=f"[recomputing-{claim.pk}]")
    taken = set()
    for claim in claims:
        shape = skeleton(claim.user.username)
        if shape in taken:
            # Two older names that only now look alike: the older account
            # keeps the skeleton, this one its folded name alone.
            shape = f"[unclaimed-{claim.pk}]"
        taken.add(shape)
        UsernameClaim.objects.filter(pk=claim.pk).update(skeleton=shape)


class Migration(migrations.Migration):
    dependencies = [("ladder", "0001_initial")]
    operations = [migrations.RunPython(recompute, migrations.RunPython.noop)]
