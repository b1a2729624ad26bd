"""One identity per name (issue 11, item 7): usernames unique after NFKC
and case folding, look-alikes and reserved names refused, with one set of
rules (ladder.services.accounts) on the web sign-up form and the API; bot
names unique per game whatever the case, built-ins included."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from ladder.models import Bot, UsernameClaim
from tests.ladder import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]

REGISTER = "/api/auth/register/"


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    f.limit_rate(settings, "register", "100000/hour")
    f.limit_rate(settings, "bot", "100000/hour")


def api_register(username: str):
    return f.client().post(REGISTER, {"username": username, "password": f.PASSWORD}, format="json")


def web_signup(username: str):
    return Client().post(reverse("web-signup"), {"username": username, "password1": f.PASSWORD, "password2": f.PASSWORD})


def web_error(response) -> str:
    assert response.status_code == 200, response.status_code  # the form again, with the error
    return html.unescape(response.content.decode())


REFUSED = [
    # (name to sign up, an existing user or None, what the refusal says)
    ("ALICE", "alice", "is taken"),
    ("Alice", "alice", "is taken"),
    ("ａｌｉｃｅ", "alice", "is taken"),  # fullwidth: NFKC makes it "alice"
    ("\u0430lice", "alice", "mixes scripts"),  # Cyrillic а + Latin "lice"
    ("\u0430\u0441\u0435", "ace", "too like"),  # all Cyrillic: "асе" reads as "ace"
    ("a1ice", "alice", "too like"),
    ("AIice", "alice", "too like"),  # capital I for l
    ("b0b", "bob", "too like"),
    ("CardRoom", None, "reserved"),  # the system user the built-in bots belong to
    ("cardroom", None, "reserved"),
    ("admin", None, "reserved"),
    ("Api", None, "reserved"),
    ("STAFF", None, "reserved"),
    # issue 25, item 7: a small l for the capital I of a reserved name
    ("ADMlN", None, "reserved"),
    ("APl", None, "reserved"),
    ("MEDlA", None, "reserved"),
    ("adm1n", None, "reserved"),
    ("BIll", "blll", "too like"),
    # issue 25, item 4: names that read as a deleted account's tombstone
    ("deleted-6", None, "reserved"),
    ("DELETED-12", None, "reserved"),
    ("de1eted_6", None, "reserved"),
    # issue 36, item 6: the separators _ . @ + - make no other name
    ("alice.", "alice", "too like"),
    ("alice_", "alice", "too like"),
    ("_alice", "alice", "too like"),
    ("a.lice", "alice", "too like"),
    ("a_l_i_c_e", "alice", "too like"),
    ("A-L-1-C-E", "alice", "too like"),  # separators and look-alikes at once
    ("alice", "a.lice", "too like"),  # whichever came first
    ("асе_", "ace", "too like"),  # Cyrillic and a separator
    ("a_d_m_i_n", None, "reserved"),
    ("de.leted6", None, "reserved"),
    ("_._", None, "at least one letter or digit"),
    ("x", None, "3-40 characters"),
    ("xy", None, "3-40 characters"),
    ("u" * 41, None, "3-40 characters"),
    ("no spaces", None, "3-40 characters"),
]


@pytest.mark.parametrize("name, existing, says", REFUSED)
def test_api_refuses_case_variants_look_alikes_reserved_and_short_names(name, existing, says):
    if existing:
        f.user(existing)
    body = f.assert_error(api_register(name), 400, field="username", contains=says)
    assert "token" not in body
    assert get_user_model().objects.count() == (2 if existing else 1)  # (and the system user)


@pytest.mark.parametrize("name, existing, says", REFUSED)
def test_web_signup_refuses_the_same_names_with_the_same_words(name, existing, says):
    if existing:
        f.user(existing)
    page = web_error(web_signup(name))
    assert says in page
    assert get_user_model().objects.count() == (2 if existing else 1)


@pytest.mark.parametrize("name", ["bob_the-builder", "José", "Дмитрий", "李小龍", "r2d2", "anna.k+bots@home"])
def test_names_of_one_script_are_welcome_on_both(name):
    assert api_register(name).status_code == 201
    other = name + "2"
    response = web_signup(other)
    assert response.status_code == 302, web_error(response)[-1500:]
    assert set(get_user_model().objects.filter(username__in=[name, other]).values_list("username", flat=True)) == {name, other}


def test_a_name_is_stored_in_its_nfkc_form():
    assert api_register("ｍａｒｔｉｎ").status_code == 201
    assert get_user_model().objects.filter(username="martin").exists()


def test_every_user_holds_a_claim_even_made_outside_the_forms():
    """createsuperuser and the admin make users too: their names are claimed
    (post_save), so a case variant of them is refused at sign-up."""
    get_user_model().objects.create_superuser("Operator7", password=f.PASSWORD)
    assert UsernameClaim.objects.filter(folded="operator7").exists()
    f.assert_error(api_register("OPERATOR7"), 400, field="username", contains="is taken")


def test_claims_are_unique_in_the_database():
    """Two sign-ups racing past the checks: the claim's unique constraint
    lets one through."""
    f.user("racer")
    with pytest.raises(IntegrityError), transaction.atomic():
        UsernameClaim.objects.create(user=f.user("other-racer"), folded="racer", skeleton="racer-x")


# -- bot names ---------------------------------------------------------------------------


def test_api_refuses_a_case_variant_of_a_built_in_bot():
    owner = f.user("botmaker")
    response = f.client(owner).post("/api/bots/", {"game": "allegra", "name": "Greedy"}, format="json")
    f.assert_error(response, 400, field="name", contains="there is already a built-in Allegra bot named 'greedy'")
    assert not Bot.objects.filter(name="Greedy").exists()


def test_web_form_refuses_a_case_variant_of_another_users_bot():
    f.bot(f.user("first"), "allegory", "NightOwl")
    second = f.user("second")
    c = Client()
    c.force_login(second)
    page = web_error(c.post(reverse("web-my-bots"), {"game": "allegory", "name": "nightowl", "description": ""}))
    assert "there is already an Allegory bot named 'NightOwl'" in page
    # Another game is another namespace.
    assert c.post(reverse("web-my-bots"), {"game": "allegra", "name": "nightowl"}).status_code == 302


def test_the_database_holds_bot_names_unique_whatever_the_case():
    owner = f.user("direct")
    with pytest.raises(IntegrityError), transaction.atomic():
        Bot.objects.create(owner=owner, game="allegra", name="RANDOM")


# -- deleted accounts stay anonymous (issue 25, item 4) ----------------------------------


@pytest.mark.parametrize("variant", [str, str.upper, lambda n: n.replace("l", "1")], ids=["same", "upper", "look-alike"])
def test_a_refusal_never_names_the_account_it_clashes_with(variant):
    from ladder.services import accounts

    accounts.delete_account(f.user("lilywhite"))  # now "[deleted-<id>]", keeping the name's claim
    f.user("olivetree")
    for existing in ("lilywhite", "olivetree"):
        name = variant(existing)
        api = f.assert_error(api_register(name), 400, field="username")["error"]
        page = web_error(web_signup(name))
        for text in (api, page):
            assert "is taken" in text or "too like an existing username" in text, text[-600:]
            assert "deleted" not in text
            # the name tried may be quoted back, never the other account's
            assert text.count(f"'{existing}'") == (text.count(f"'{name}'") if name == existing else 0)


def test_the_skeleton_migration_recomputes_every_claim_without_a_clash():
    """Claims stored before i, l and 1 became one class get their new
    skeleton; of two old names that only now look alike, the older account
    keeps the skeleton, the other its folded name (and no clash stops the
    migration)."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("ladder.migrations.0002_recompute_username_skeletons")
    older, newer, plain = f.user("kilo"), f.user("klio"), f.user("bob")
    # as the old function stored them: "kilo" kept its i, and "klio" could claim its own
    UsernameClaim.objects.filter(user=older).update(skeleton="kilo")
    UsernameClaim.objects.update_or_create(user=newer, defaults={"folded": "klio", "skeleton": "klio"})
    migration.recompute(apps, None)
    claims = {c.user_id: c for c in UsernameClaim.objects.all()}
    assert claims[older.pk].skeleton == "kllo"
    assert claims[newer.pk].folded == "klio" and claims[newer.pk].skeleton == f"[unclaimed-{newer.pk}]"
    assert claims[plain.pk].skeleton == "bob"
    f.assert_error(api_register("KLIO"), 400, field="username", contains="is taken")
    f.assert_error(api_register("k1lo"), 400, field="username", contains="too like")


def test_a_look_alike_refusal_says_what_makes_names_one():
    f.user("alice")
    body = f.assert_error(api_register("a_l_i_c_e"), 400, field="username")
    assert "separators _ . @ + -" in body["error"] and "choose another" in body["error"], body


def test_the_separator_migration_folds_every_claim_and_existing_accounts_keep_working():
    """Claims stored before the separators were left out get their new
    skeleton: a deleted account's from the skeleton it kept (its name is a
    tombstone); of two old names that only now look alike, the older keeps
    the skeleton and both accounts still sign in."""
    import importlib

    from django.apps import apps

    from ladder.services import accounts

    migration = importlib.import_module("ladder.migrations.0009_username_skeleton_separators")
    older, newer, gone = f.user("carol"), f.user("zed"), f.user("lilywhite")
    accounts.delete_account(gone)
    # as the old function stored them: separators kept, so "c.arol" could claim its own
    get_user_model().objects.filter(pk=newer.pk).update(username="c.arol")
    UsernameClaim.objects.filter(user=newer).update(folded="c.arol", skeleton="c.arol")
    UsernameClaim.objects.filter(user=gone).update(skeleton="lll_ywhlte")
    migration.recompute(apps, None)
    claims = {c.user_id: c for c in UsernameClaim.objects.all()}
    assert claims[older.pk].skeleton == "carol"
    assert claims[newer.pk].folded == "c.arol" and claims[newer.pk].skeleton == f"[unclaimed-{newer.pk}]"
    assert claims[gone.pk].skeleton == "lllywhlte"
    f.assert_error(api_register("ca_rol"), 400, field="username", contains="too like")
    f.assert_error(api_register("lily_white"), 400, field="username", contains="too like")
    for name in ("carol", "c.arol"):  # both accounts sign in as before
        response = f.client().post("/api/auth/token/", {"username": name, "password": f.PASSWORD}, format="json")
        assert response.status_code == 200, response.content
