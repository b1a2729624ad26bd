from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate, post_save


def _install_defaults(sender, **kwargs) -> None:
    from ladder.services.bots import install_defaults

    install_defaults()


def _claim_username(sender, instance, raw=False, update_fields=None, **kwargs) -> None:
    from ladder.services.accounts import claim_username

    if raw or (update_fields is not None and "username" not in update_fields):
        return  # loading fixtures, or a save that leaves the name (last_login)
    claim_username(instance)


class LadderConfig(AppConfig):
    name = "ladder"
    verbose_name = "cardroom ladder"

    def ready(self) -> None:
        # After every `manage.py migrate`: default ladders and built-in bots.
        post_migrate.connect(_install_defaults, sender=self, dispatch_uid="ladder-install-defaults")
        # Every saved user (sign-up, admin, createsuperuser) claims its username's forms.
        post_save.connect(_claim_username, sender=settings.AUTH_USER_MODEL, dispatch_uid="ladder-claim-username")
        from ladder import caching

        caching.connect_signals()  # writes through save() invalidate cached public reads
        from ladder.services import matches
        from ladder.worker import sandbox

        matches.use_launcher_policy(sandbox.launcher_for)  # the worker side's sandbox policy starts every bot
