"""A user's e-mail address: saved, verified, and the only place a password
reset goes.

Anyone can type any address on their account page, so an address counts
only once its owner has opened the signed link sent there (VerifiedEmail);
changing the address unverifies it. Every message is sent by a Celery task
(ladder.tasks), never while a page waits: the reset page answers in the
same time whether or not an account has the address (with SMTP in the
request, a registered address took the SMTP round trip, 675 ms against
22 ms, and so told anyone which addresses are registered). The request's
scheme and host go with the task: the links must be the public site's.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from ladder.models import VerifiedEmail
from ladder.services.enqueue import send
from ladder.services.errors import InvalidInput

SEND_PASSWORD_RESET = "ladder.tasks.send_password_reset"
SEND_EMAIL_VERIFICATION = "ladder.tasks.send_email_verification"
_SALT = "cardroom.email-verification"


def address_key(email: str) -> str:
    """Who an address is to the per-address rate limit: case-folded and
    hashed (no address is kept in the limits' store)."""
    return hashlib.blake2b(email.strip().casefold().encode(), digest_size=16).hexdigest()


def is_verified(user) -> bool:
    if not user.email:
        return False
    proof = VerifiedEmail.objects.filter(user=user).first()
    return proof is not None and proof.email.casefold() == user.email.casefold()


def set_email(user, email: str) -> bool:
    """Save ``email`` as the user's address; True when a verification link
    must be sent (a new, non-empty address not verified yet)."""
    with transaction.atomic():
        user.email = email
        user.save(update_fields=["email"])
        if not email:
            VerifiedEmail.objects.filter(user=user).delete()
            return False
    return not is_verified(user)


def verification_token(user) -> str:
    return signing.dumps({"u": user.pk, "e": user.email}, salt=_SALT, compress=True)


def verify(token: str):
    """Mark the address a link was sent to as verified; the user. A
    ServiceError says why a link does not work (forged, too old, or for an
    address the account no longer has)."""
    try:
        claim = signing.loads(token, salt=_SALT, max_age=settings.PASSWORD_RESET_TIMEOUT)
    except signing.SignatureExpired:
        raise InvalidInput("this link is too old: save the address again on your account page for a new one") from None
    except signing.BadSignature:
        raise InvalidInput("this link is not one cardroom sent: copy the whole link from the e-mail") from None
    user = get_user_model().objects.filter(pk=claim.get("u"), is_active=True).first()
    if user is None or not user.email or user.email.casefold() != str(claim.get("e", "")).casefold():
        raise InvalidInput("this link is for an address the account no longer has: its page says which address it has now")
    VerifiedEmail.objects.update_or_create(user=user, defaults={"email": user.email, "verified": timezone.now()})
    return user


# -- sending (the tasks' side) ---------------------------------------------------------


def request_verification(user, domain: str, use_https: bool) -> None:
    """Send the verification link, from a worker (after set_email: the
    address is committed)."""
    send(SEND_EMAIL_VERIFICATION, (user.pk, domain, use_https))


def request_password_reset(email: str, domain: str, use_https: bool) -> None:
    """Hand a reset request to a worker: the same work for every address,
    registered or not (the lookup happens there)."""
    send(SEND_PASSWORD_RESET, (email, domain, use_https))


def send_verification(user_id: int, domain: str, use_https: bool) -> bool:
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None or not user.email or is_verified(user):
        return False
    protocol = "https" if use_https else "http"
    link = f"{protocol}://{domain}{reverse('web-verify-email', args=[verification_token(user)])}"
    context = {"user": user, "link": link, "domain": domain, "email": user.email}
    send_mail(
        render_to_string("cardroom/email/verify_email_subject.txt", context).strip(),
        render_to_string("cardroom/email/verify_email.txt", context),
        None,
        [user.email],
    )
    return True


class VerifiedPasswordResetForm(PasswordResetForm):
    """Django's reset form, sending only to accounts whose address is verified."""

    def get_users(self, email):
        verified = VerifiedEmail.objects.filter(email__iexact=email).values("user_id")
        users = get_user_model()._default_manager.filter(email__iexact=email, is_active=True, pk__in=verified)
        return (u for u in users if u.has_usable_password() and is_verified(u))


def send_password_reset(email: str, domain: str, use_https: bool) -> int:
    """Send the reset link to every active account whose verified address
    is ``email`` (none: nothing is sent); how many were sent."""
    form = VerifiedPasswordResetForm({"email": email})
    if not form.is_valid():
        return 0
    users = list(form.get_users(email))
    if users:
        form.save(
            domain_override=domain,
            use_https=use_https,
            subject_template_name="cardroom/email/password_reset_subject.txt",
            email_template_name="cardroom/email/password_reset.txt",
        )
    return len(users)
