"""The account's e-mail address and password resets (issue 25, items 1, 6
and 9): an address receives resets only once verified through the signed
link sent there; reset requests are limited per client and per address and
answered alike for every address, the e-mail going out from a Celery task;
a password change or reset replaces the API token; the links in the
e-mails keep the public host and port."""

from __future__ import annotations

import re

import pytest
from celery import current_app
from django.core import mail
from django.test import Client
from django.urls import reverse

from ladder.models import VerifiedEmail
from ladder.services import account_email
from tests.ladder import factories as lf
from tests.ladder.worker_fixtures import celery_workers_fixture  # noqa: F401 (the fixture celery_workers)
from tests.web import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager(settings, monkeypatch):
    """Tasks run where they are sent (the mail tasks' own behaviour is the
    same; test_the_reset_email_comes_from_a_worker runs a real one)."""
    import ladder.tasks  # noqa: F401  (registers the tasks, as a worker's autodiscovery does)

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    monkeypatch.setitem(current_app.conf, "task_always_eager", True)


def _client(user=None, **defaults) -> Client:
    c = Client(**defaults)
    if user is not None:
        c.force_login(user)
    return c


def _link(message) -> str:
    return re.search(r"https?://\S+", message.body).group(0)


def _path(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url)


def _reset(address: str, client: Client | None = None, secure: bool = False):
    return (client or _client()).post(reverse("web-password-reset"), {"email": address}, secure=secure)


def _verified_user(name: str, address: str):
    user = f.user(name)
    c = _client(user)
    c.post(reverse("web-account-email"), {"email": address})
    c.get(_path(_link(mail.outbox[-1])))
    user.refresh_from_db()
    assert account_email.is_verified(user)
    mail.outbox.clear()
    return user


# -- verification -----------------------------------------------------------------------


def test_an_address_receives_resets_only_once_verified(eager):
    owner = f.user("forgetful")
    c = _client(owner)
    c.post(reverse("web-account-email"), {"email": "forgetful@example.org"})
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["forgetful@example.org"]
    assert "Confirm" in mail.outbox[0].subject
    page = c.get(reverse("web-account")).content.decode()
    assert "is <strong>not verified</strong>" in page and "Send the link again" in page
    # unverified: a reset request sends nothing
    assert _reset("forgetful@example.org").status_code == 302
    assert len(mail.outbox) == 1
    # the link, opened anywhere (it is the mailbox that proves the address)
    opened = _client().get(_path(_link(mail.outbox[0])))
    assert opened.status_code == 200 and "Address confirmed" in opened.content.decode()
    assert "is <strong>verified</strong>" in c.get(reverse("web-account")).content.decode()
    _reset("FORGETFUL@example.org")
    assert len(mail.outbox) == 2 and mail.outbox[1].to == ["forgetful@example.org"]
    assert "/reset/" in _link(mail.outbox[1])


def test_someone_elses_address_saved_on_an_account_gets_no_reset_for_it(eager):
    _verified_user("alice", "alice@example.org")
    mallory = f.user("mallory")
    _client(mallory).post(reverse("web-account-email"), {"email": "alice@example.org"})
    assert len(mail.outbox) == 1  # the verification link, which goes to Alice's mailbox
    mail.outbox.clear()
    _reset("alice@example.org")
    assert len(mail.outbox) == 1
    assert "alice" in mail.outbox[0].body and "mallory" not in mail.outbox[0].body


def test_changing_the_address_unverifies_it_and_old_links_stop_working(eager):
    owner = _verified_user("mover", "old@example.org")
    c = _client(owner)
    c.post(reverse("web-account-email"), {"email": "new@example.org"})
    link = _path(_link(mail.outbox[-1]))
    assert "not verified" in c.get(reverse("web-account")).content.decode()
    _reset("old@example.org")
    _reset("new@example.org")
    assert len(mail.outbox) == 1  # only the verification link
    # a link for the address the account had is refused once it changed
    c.post(reverse("web-account-email"), {"email": "third@example.org"})
    stale = _client().get(link)
    assert stale.status_code == 400 and "no longer has" in stale.content.decode()
    owner.refresh_from_db()
    assert not account_email.is_verified(owner)


@pytest.mark.parametrize("token", ["junk", "eyJ1IjoxLCJlIjoiYUBiLmMifQ:1tX:forged"])
def test_a_forged_link_is_a_400_saying_so(eager, token):
    response = _client().get(reverse("web-verify-email", args=[token]))
    assert response.status_code == 400 and "not one cardroom sent" in response.content.decode()
    assert not VerifiedEmail.objects.exists()


def test_the_verification_link_can_be_sent_again(eager):
    owner = f.user("patient")
    c = _client(owner)
    c.post(reverse("web-account-email"), {"email": "patient@example.org"})
    response = c.post(reverse("web-account-email"), {"action": "resend"}, follow=True)
    assert "A verification link is on its way" in response.content.decode()
    assert len(mail.outbox) == 2


# -- rate limits ------------------------------------------------------------------------


def test_reset_requests_are_limited_per_client(eager, settings):
    lf.limit_rate(settings, "reset", "3/hour")
    for i in range(3):
        assert _reset(f"nobody{i}@example.org").status_code == 302
    refused = _reset("nobody9@example.org")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many requests" in refused.content.decode()
    other = _client(REMOTE_ADDR="198.51.100.7")
    assert _reset("nobody9@example.org", other).status_code == 302


def test_emails_to_one_address_are_limited_from_any_client_registered_or_not(eager, settings):
    lf.limit_rate(settings, "mail-address", "3/hour")
    _verified_user("target", "target@example.org")  # its verification link is one e-mail to the address
    for address, allowed in (("target@example.org", 2), ("unknown@example.org", 3)):
        answers = [_reset(address.upper() if i else address, _client(REMOTE_ADDR=f"203.0.113.{i}")).status_code for i in range(4)]
        assert answers == [302] * allowed + [429] * (4 - allowed), (address, answers)
    assert len(mail.outbox) == 2  # the two resets let through for the registered address


# -- the same answer for every address ----------------------------------------------------


def test_a_registered_and_an_unknown_address_get_the_same_answer_and_no_email_is_sent_in_the_request(settings):
    """The request only hands the address to a worker (one message on the
    mail queue, in the real Redis broker): no lookup, no SMTP, for either."""
    from tests.ladder.worker_fixtures import flush_broker, queue_length, require_redis_broker

    require_redis_broker()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = f.user("quiet")
    user.email = "quiet@example.org"
    user.save()
    VerifiedEmail.objects.create(user=user, email=user.email, verified="2026-01-01T00:00:00Z")
    flush_broker()
    try:
        answers = []
        for address in ("quiet@example.org", "nobody@example.org"):
            response = _reset(address)
            answers.append((response.status_code, response["Location"], response.content))
            assert queue_length("mail") == len(answers)
        assert answers[0] == answers[1]
        assert mail.outbox == []
    finally:
        flush_broker()


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_reset_email_comes_from_a_worker_through_smtp(celery_workers):
    """A real worker on the mail queue sends the reset through a real (slow)
    SMTP server; the page answered before the server took the message."""
    from ladder.hosting.smtp_sink import SmtpSink

    user = f.user("distant")
    user.email = "distant@example.org"
    user.save()
    VerifiedEmail.objects.create(user=user, email=user.email, verified="2026-01-01T00:00:00Z")
    with SmtpSink(delay=1.5) as sink:
        celery_workers.start("mail", queues="mail", EMAIL_URL=f"smtp://127.0.0.1:{sink.port}")
        response = _reset("distant@example.org", _client(HTTP_HOST="testserver:8080"))
        assert response.status_code == 302
        assert sink.messages == []  # the page did not wait for SMTP
        (message,) = sink.wait_for(1, timeout=60)
        assert message["To"] == "distant@example.org"
        body = message.get_payload(decode=True).decode()
        assert re.search(r"http://testserver:8080/reset/\S+/", body), body


# -- tokens ---------------------------------------------------------------------------------


def _token_works(key: str) -> bool:
    return _client().get("/api/auth/me/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


def test_a_password_change_replaces_the_api_token_and_says_so():
    owner = f.user("changer")
    old = lf.token(owner)
    c = _client(owner)
    response = c.post(
        reverse("web-password-change"),
        {"old_password": f.PASSWORD, "new_password1": "Another-pass-8312", "new_password2": "Another-pass-8312"},
        follow=True,
    )
    assert "Your API token was replaced too" in response.content.decode()
    new = lf.token(owner)
    assert new != old and not _token_works(old) and _token_works(new)
    assert new in response.content.decode()  # the account page shows the new one


def test_a_password_reset_replaces_the_api_token_and_says_so(eager):
    owner = _verified_user("resetter", "resetter@example.org")
    old = lf.token(owner)
    _reset("resetter@example.org")
    anonymous = _client()
    form = anonymous.get(_path(_link(mail.outbox[0])), follow=True)
    done = anonymous.post(form.redirect_chain[-1][0], {"new_password1": "Brand-new-pass-97", "new_password2": "Brand-new-pass-97"}, follow=True)
    assert "Your new password is set" in done.content.decode()
    assert "Your API token was replaced too" in done.content.decode()
    assert not _token_works(old) and _token_works(lf.token(owner))


# -- links keep the public host ---------------------------------------------------------------


def test_the_emails_links_keep_the_host_and_port_the_request_came_to(eager):
    owner = f.user("porty")
    c = _client(owner, HTTP_HOST="testserver:8080")
    c.post(reverse("web-account-email"), {"email": "porty@example.org"})
    assert _link(mail.outbox[0]).startswith("http://testserver:8080/account/verify/")
    c.get(_path(_link(mail.outbox[0])))
    _reset("porty@example.org", _client(HTTP_HOST="testserver:8080"), secure=True)
    assert _link(mail.outbox[1]).startswith("https://testserver:8080/reset/")
