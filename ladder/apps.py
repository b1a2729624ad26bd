from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _install_defaults(sender, **kwargs) -> None:
    from ladder.services.bots import install_defaults

    install_defaults()


class LadderConfig(AppConfig):
    name = "ladder"
    verbose_name = "cardroom ladder"

    def ready(self) -> None:
        # After every `manage.py migrate`: default ladders and built-in bots.
        post_migrate.connect(_install_defaults, sender=self, dispatch_uid="ladder-install-defaults")
        from ladder import caching

        caching.connect_signals()  # writes through save() invalidate cached public reads
