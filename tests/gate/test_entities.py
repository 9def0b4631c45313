from __future__ import annotations

import string
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.text import entities as entities_module
from validator.text.entities import SPECIAL_USE_DOMAINS, extract_entities, kind_of, plain_address


def test_extracts_each_kind_once_in_order() -> None:
    text = (
        "Pay DE44 5001 0517 5407 3249 31 or call +1 415 555 0100; details at https://pay.evil.example/inv?id=4, "
        "write to billing@supplies.example. Account 12345678901."
    )
    assert [(e.kind, e.value) for e in extract_entities(text)] == [
        ("iban", "DE44 5001 0517 5407 3249 31"),
        ("phone", "+1 415 555 0100"),
        ("url", "https://pay.evil.example/inv?id=4"),
        ("email", "billing@supplies.example"),
        ("phone", "12345678901"),  # a valid number in the default region: compared as a phone, on both sides
    ]


@pytest.mark.parametrize(
    "text", ["Meeting on 2026-11-30 at 10:00", "Invoice 443 for 4,800 EUR", "DE00123456789012345678"]
)
def test_dates_amounts_and_bad_ibans_are_not_entities(text: str) -> None:
    assert extract_entities(text) == []


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("bob@acme.example", "email"),
        ("https://acme.example/x", "url"),
        ("DE44500105175407324931", "iban"),
        ("(415) 555-0100", "phone"),
        ("Bob Smith", None),
        ("mail bob@acme.example now", None),
    ],
)
def test_kind_of(value: str, kind: str | None) -> None:
    assert kind_of(value) == kind


# -- the plainest addresses, read without email-validator (issue 61: its import is some twenty ms of a process) -----

_ATEXT_CHARS = string.ascii_letters + string.digits + "_!#$%&'*+-/=?^`{|}~"
_HOST_CHARS = string.ascii_letters + string.digits + "-"
_NAMES = ["com", "co", "uk", "example", "Mail", "x", "xn--p1ai", "ab--cd", "1a", "a1", "local", "LOCALHOST", "test"]


def _validated(text: str) -> str | None:
    """The identity ``_email`` keeps for ``text`` when email-validator accepts it as one plain address (no note),
    else None: the oracle, ``_email`` itself with the plain reading switched off."""
    with mock.patch.object(entities_module, "plain_address", lambda text: None):
        found = entities_module._email(text, 0)
    return found.key if found is not None and found.note is None else None


_label = st.one_of(
    st.text(_HOST_CHARS, min_size=0, max_size=8),
    st.text(_HOST_CHARS, min_size=60, max_size=66),  # around the 63 a label may have
    st.sampled_from([*SPECIAL_USE_DOMAINS, *_NAMES, "arpa", "onion", "invalid"]),
)
_local = st.one_of(
    st.text(_ATEXT_CHARS + ".", min_size=0, max_size=12),
    st.text(_ATEXT_CHARS, min_size=60, max_size=200),  # past 64 (email-validator counts it only when strict)
    st.sampled_from(["bob", "Bob.Smith+tag", ".bob", "bob.", "b..b", "postmaster", '"bob"', "bob smith", "bób"]),
)
_address = st.builds(
    lambda local, labels, at: f"{local}{at}{'.'.join(labels)}",
    _local,
    st.lists(_label, min_size=0, max_size=5),
    st.sampled_from(["@", "@", "@", "@@", "\uff20", "<", ""]),
)
_likely = st.builds(  # mostly well formed, so that the plain form is met often (about half of these)
    lambda local, labels, last: f"{local}@{'.'.join([*labels, last])}",
    st.from_regex(r"[A-Za-z0-9_+'-]{1,10}(\.[A-Za-z0-9!#$%&*/=?^`{|}~-]{1,6}){0,2}", fullmatch=True),
    st.lists(st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9-]{0,8}[A-Za-z0-9])?", fullmatch=True), min_size=1, max_size=3),
    st.one_of(st.from_regex(r"[A-Za-z]{2,6}", fullmatch=True), st.sampled_from([*_NAMES, *SPECIAL_USE_DOMAINS])),
)
_noise = st.text(_ATEXT_CHARS + _HOST_CHARS + '.@<>"\\ []:é\u0301', max_size=40)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(_likely, _address, _noise, st.builds(lambda a, n: a + n, _address, _noise)))
def test_a_plain_address_reads_as_email_validator_reads_it(text: str) -> None:
    plain = plain_address(text)
    if plain is not None:  # read without it: what email-validator says of it, exactly
        assert _validated(text) == plain, text


def test_the_plain_form_covers_the_everyday_address_and_nothing_special() -> None:
    for text, key in [
        ("bob@example.com", "bob@example.com"),
        ("Bob.Smith+Tag@Mail.Example.CO.UK", "bob.smith+tag@mail.example.co.uk"),
        ("o'brien@acme-corp.example", "o'brien@acme-corp.example"),
        (f"{'a' * 200}@x.io", f"{'a' * 200}@x.io"),  # the local part's 64 are counted only when strict
    ]:
        assert plain_address(text) == key == _validated(text)
    refused = ["bob@localhost", "bob@host.local", "bob@x.test", "a@b.c1", "a@b", "a@xn--p1ai.com", "a@ab--c.com"]
    refused += ["bób@x.com", ".bob@x.com", "bob@-x.com", f"bob@{'a' * 64}.com", f"{'a' * 250}@x.com", "a@b@c.com"]
    for text in refused:
        assert plain_address(text) is None, text  # email-validator decides each of these


def test_the_special_use_names_are_email_validators() -> None:
    import email_validator

    assert list(SPECIAL_USE_DOMAINS) == email_validator.SPECIAL_USE_DOMAIN_NAMES


def test_an_address_read_plainly_is_the_entity_email_validator_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["Email Bob.Smith@Example.com and mailto:eve@acme.example now.", "pay a@b.co or <c@d.org>"]
    plain = [extract_entities(t) for t in texts]
    assert any(e.kind == "email" for found in plain for e in found)
    monkeypatch.setattr(entities_module, "plain_address", lambda text: None)
    entities_module._extract.cache_clear()
    try:
        assert [extract_entities(t) for t in texts] == plain
    finally:
        entities_module._extract.cache_clear()


def test_a_plain_address_at_each_length_limit_reads_as_email_validator_reads_it() -> None:
    """The limits: 63 a label, 253 the host, 254 the whole address (the local part is not counted alone)."""
    for label in (62, 63, 64):
        for host_labels in (1, 3, 4):
            host = ".".join(["a" * label] * host_labels + ["com"])
            for local in (1, 64, 65, 254 - len(host) - 1, 254 - len(host)):
                if local < 1:
                    continue
                text = f"{'b' * local}@{host}"
                plain = plain_address(text)
                assert plain == _validated(text) or (plain is None and _validated(text) is not None), text


def test_a_host_that_changed_email_validators_settings_has_every_address_read_by_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """email-validator's README has applications set its module's defaults: strict (the local part's 64
    characters counted), or more special-use names. Then no address is read plainly (found by a reviewer)."""
    import email_validator

    long_local = f"{'a' * 65}@example.com"
    assert plain_address(long_local) is not None
    monkeypatch.setattr(email_validator, "STRICT", True)
    assert plain_address(long_local) is None and plain_address("bob@example.com") is None
    monkeypatch.setattr(email_validator, "STRICT", False)
    monkeypatch.setattr(
        email_validator, "SPECIAL_USE_DOMAIN_NAMES", [*email_validator.SPECIAL_USE_DOMAIN_NAMES, "corp"]
    )
    assert plain_address("bob@intranet.corp") is None and _validated("bob@intranet.corp") is None


def test_a_hostile_address_is_never_read_plainly_and_never_costs_its_length() -> None:
    """Look-alike letters, a lone surrogate, a combining mark, a megabyte of periodic text: none is read plainly
    (email-validator decides each, as before; a megabyte is refused by its length before any pattern runs)."""
    for text in ["bob@ex\u0430mple.com", "bob\ud800@example.com", "bo\u0301b@example.com", "bob@example.com\u200b"]:
        assert plain_address(text) is None, text
    huge = "ab." * 350_000 + "@example.com"
    assert plain_address(huge) is None and plain_address("a@" + "b." * 500_000 + "com") is None
    (found,) = extract_entities("Email bob@ex\u0430mple.com now.")  # email-validator's, flagged as before
    assert found.kind == "email" and found.note is not None and "look-alike" in found.note
