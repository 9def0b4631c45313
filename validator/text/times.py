"""A time the user named, compared with a date or a date-time argument of a call.

The request grammar reads a time as words ("Friday", "3pm", "the 9th", "tomorrow", "December 5"); an
event's argument holds a date-time ("2026-12-04T14:00"). A time the user named *holds* the argument when
every part the user said agrees with it: a weekday with the date's weekday, a day of the month, a month, a
time of day with the hour and minute, a year with the year, "today", "tomorrow" and "tonight" with the date of
the check (its ``now``). What the user did not say (the minute of "3pm" aside) is not compared, but the date must
be the next one that fits: a weekday within a week of the check, a day of the month within a month, a month
within a year, a time of day alone today or tomorrow. A part code cannot read ("next week", "the
weekend") holds nothing, so the argument stays unknown; so does any time when the check has no date.
The words of weekdays, months and parts of the day live in the language pack.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from validator.language import LanguagePack, english

__all__ = ["holds_time", "is_year", "moment", "named_years", "span_sides"]

_CLOCK = re.compile(r"(?i)^(\d{1,2})(?::(\d{2}))?\s?(am|pm|a\.m\.|p\.m\.)?$")
_ORDINAL = re.compile(r"(?i)^(\d{1,2})(?:st|nd|rd|th)$")
_YEAR_DIGITS = r"(?:19|20|21)\d{2}"
_YEAR = re.compile(rf"^{_YEAR_DIGITS}$")


def moment(value: object) -> datetime | None:
    """An argument's date-time (ISO 8601), or None when it is none."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _part_holds(word: str, at: datetime, has_time: bool, now: datetime | None, pack: LanguagePack) -> bool | None:
    """Whether one word of a time holds ``at`` (None: the word says nothing comparable)."""
    words = pack.times
    if word in words["weekdays"]:
        return bool(at.weekday() == words["weekdays"][word])
    if word in words["months"]:
        return bool(at.month == words["months"][word])
    if word in words["days"] and now is not None:
        if word in words["hours"] and has_time and not _in_hours(at, words["hours"][word]):
            return False  # "tonight": today, in the evening
        return bool(at.date() == now.date() + timedelta(days=words["days"][word]))
    if word in words["hours"] and has_time:
        return _in_hours(at, words["hours"][word])
    if _YEAR.match(word):
        return at.year == int(word)  # "in 2030"
    m = _ORDINAL.match(word)
    if m is not None:
        return at.day == int(m.group(1))
    m = _CLOCK.match(word)
    if m is not None and has_time:
        hour, minute, half = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower().replace(".", "")
        if half == "pm" and hour < 12:
            hour += 12
        if half == "am" and hour == 12:
            hour = 0
        if not half and not m.group(2) and hour <= 12 and at.hour in (hour, hour + 12):
            return at.minute == minute  # "at 10": ten in the morning or in the evening, as the call says
        return (at.hour, at.minute) == (hour, minute)
    if word.isdigit() and 1 <= int(word) <= 31:
        return at.day == int(word)  # "December 5"
    return None


def _in_hours(at: datetime, hours: tuple[int, int] | list[int]) -> bool:
    low, high = hours
    return bool(low <= at.hour < high if high > low else at.hour == low)


def holds_time(
    said: Sequence[str], value: object, now: datetime | None = None, pack: LanguagePack | None = None
) -> bool:
    """Whether the times the user said (each as the grammar read it: "friday", "3pm", "the 9th") all hold the
    argument ``value`` (an ISO date or date-time), and at least one part was compared. ``pack``: the language of
    the words (English by default)."""
    at = moment(value)
    if at is None or now is None:
        return False  # no date of the check: "Friday" cannot be placed
    has_time = isinstance(value, str) and ("T" in value or " " in value.strip())
    pack = pack or english()
    words = pack.times
    horizon = 1  # a time of day alone: today's or tomorrow's
    compared = False
    for phrase in said:
        previous = before = ""
        for word in phrase.lower().replace(",", " ").split():
            if word in words["fillers"]:
                before = word
                continue
            after_month, previous = previous in words["months"], word
            if after_month and word.isdigit() and 1 <= int(word) <= 31:
                held: bool | None = at.day == int(word)  # "December 10": a day, never ten o'clock
            elif before == "this" and word in words["hours"] and word not in words["days"]:  # "this afternoon"
                held = _part_holds(word, at, has_time, now, pack) and at.date() == now.date()  # today's
            else:
                held = _part_holds(word, at, has_time, now, pack)
            if held is None:
                return False  # a part code cannot read: the argument stays unknown
            if not held:
                return False
            compared, before = True, word
            horizon = max(horizon, _horizon(word, words, after_month=after_month, has_time=has_time))
    # the user names no year: the time is the next one that fits, not a Friday years away
    days = (at.replace(tzinfo=None).date() - now.replace(tzinfo=None).date()).days
    return compared and 0 <= days <= horizon


def _horizon(word: str, words: dict[str, Any], *, after_month: bool = False, has_time: bool = False) -> int:
    """How many days ahead the next time a word names can be: a weekday within a week, a day of the month
    within a month, a month within a year. A bare number read as an hour ("at 10", "from 2 to 4") names no day:
    its time is today's or tomorrow's. ``words``: the pack's ``times``."""
    if word in words["weekdays"]:
        return 7
    if word in words["months"]:
        return 366
    day = word.isdigit() and 1 <= int(word) <= 31 and (after_month or not has_time)
    if _ORDINAL.match(word) or day:
        return 31
    if _YEAR.match(word):
        return 366 * 200  # a year named: any day of it
    return 1


def is_year(word: str) -> bool:
    """Whether ``word`` is a year by its form ("2026"): a number that names a year, no count."""
    return bool(_YEAR.match(word))


def named_years(text: str, pack: LanguagePack | None = None) -> list[str]:
    """The years ``text`` names by form ("in 2030", "of 2030", "December 10, 2030"): a phrase the grammar did not
    read as a time's ("… on December 10 in 2030") still says which year. A number that only looks like one ("the
    2027 budget", "bob2027@…") is none. The words before a year and the months are the pack's."""
    times = (pack or english()).times
    pattern = _year_pattern(frozenset(times["months"]), frozenset(times["year_words"]))
    return [m.group(1) or m.group(2) for m in pattern.finditer(text)]


@lru_cache(maxsize=4)
def _year_pattern(months: frozenset[str], before: frozenset[str]) -> re.Pattern[str]:
    names, words = ("|".join(sorted(map(re.escape, w), key=len, reverse=True)) for w in (months, before))
    year = rf"({_YEAR_DIGITS})(?![\w@.-]*\w)"
    return re.compile(rf"(?i)\b(?:{words})\s+{year}|\b(?:{names})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{year}")


def span_sides(start: str, end: str, *, part_of_day: bool = False) -> tuple[str, str] | None:
    """A span's start and end as times to compare, each with its half of the day where the other side says it
    ("3-3:30pm": "3pm" and "3:30pm"), or None when the words are not one span within a day, in order: a side
    that is no time of day ("Friday to Monday", "3pm until Friday"), an hour whose half no side and no part of
    the day tells ("from 2 to 4"), or an end not after its start ("11pm to 1am", "11 to 1pm" is no 11pm)."""
    a, b = _clock_of(start), _clock_of(end)
    if a is None or b is None:
        return None
    (ha, ma, xa), (hb, mb, xb) = a, b
    said = ("am", "pm")
    carried_a, carried_b = xa in (None, "12") and xb in said, xb in (None, "12") and xa in said
    xa, xb = (xb if carried_a else xa), (xa if carried_b else xb)
    if "12" in (xa, xb) and None not in (xa, xb):
        xa, xb = ("24" if xa == "12" else xa), ("24" if xb == "12" else xb)  # "10:00 to 11:30": as written
    if xa is None or xb is None:  # no side says its half: a bare hour is either, unless the day's part is said
        if not part_of_day:
            return None  # "from 2 to 4": two in the night or in the afternoon
        return (start, end) if (ha, ma) < (hb, mb) else None
    if _minutes(ha, ma, xa) >= _minutes(hb, mb, xb):
        return None
    return (_shown(ha, ma, xa) if carried_a else start, _shown(hb, mb, xb) if carried_b else end)


def _clock_of(word: str) -> tuple[int, int, str | None] | None:
    """A time of day's hour, minute and half: "am"/"pm"; "24" for "14:30" (no half can be meant); "12" for
    "9:30", whose half the other side of a span may say ("9:30 to 10:30pm"), else read as written; None for a
    bare hour ("3"); None for a word that is no time of day."""
    if word == "noon":
        return (12, 0, "pm")
    m = _CLOCK.match(word)
    if m is None:
        return None
    hour, minute, half = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower().replace(".", "")
    if half:
        return (hour, minute, half) if 1 <= hour <= 12 and minute < 60 else None
    if m.group(2) is not None:
        if not (hour < 24 and minute < 60):
            return None
        return (hour, minute, "12") if 1 <= hour <= 12 else (hour, minute, "24")
    return (hour, 0, None) if 1 <= hour <= 12 else None


def _minutes(hour: int, minute: int, half: str | None) -> int:
    if half == "pm" and hour < 12:
        hour += 12
    if half == "am" and hour == 12:
        hour = 0
    return hour * 60 + minute


def _shown(hour: int, minute: int, half: str) -> str:
    return f"{hour}:{minute:02d}{half}" if minute else f"{hour}{half}"
