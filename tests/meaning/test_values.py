"""A value an honest agent words differently is the same value in every rule: both sides of a
comparison are read as tokens, so each usual form must read as its plain form, and nothing
else may."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolproof.meaning.values import mentions, tokens
from toolproof.meaning.words import word_form


def usual(text: str) -> list[str]:
    """A text's tokens, a date that reads two ways (12/03/2026) by its usual reading."""
    return [t.split("|")[0] for t in tokens(text)]


def same(*texts: str) -> None:
    """Every text reads as the first one does (a date that reads two ways, as usual)."""
    plain = usual(texts[0])
    for text in texts[1:]:
        assert usual(text) == plain, f"{text!r} read as {tokens(text)}, not {plain}"


def found_both_ways(sentence: str, one: str, other: str) -> None:
    """Either form is found in the sentence written with the other."""
    assert mentions(sentence.format(one), other), f"{other!r} not in {sentence.format(one)!r}"
    assert mentions(sentence.format(other), one), f"{one!r} not in {sentence.format(other)!r}"


# ---------------------------------------------------------------- 1. 12-hour times


def test_a_time_on_the_12_hour_clock_is_that_time_on_the_24_hour_one() -> None:
    same("13:33", "1:33 PM", "1:33pm", "1:33 p.m.", "one thirty-three PM")
    same("15:00", "3 p.m.", "3pm", "3 PM", "three p.m.")
    same("00:15", "12:15 AM", "12:15 a.m.")
    same("12:00", "noon", "12 noon", "12 PM", "twelve noon")
    same("00:00", "midnight", "12 AM")
    found_both_ways("we open at {} sharp", "9am", "09:00")


def test_a_12_hour_time_is_no_other_time_and_a_bare_time_stays_as_it_is() -> None:
    assert tokens("1:33") == ["01:33"]
    assert not mentions("at 1:33 AM", "13:33")
    assert not mentions("at 1:33 PM", "1:33")
    assert not mentions("at 3 pm", "3")  # a time, not the number three
    assert not mentions("I am 3 amendments in", "03:00")
    assert not mentions("this afternoon", "noon")


@given(
    st.integers(min_value=0, max_value=23),
    st.integers(min_value=0, max_value=59),
    st.sampled_from(
        ["{clock}:{minute} {half}M", "{clock}:{minute}{half}m", "{clock}:{minute} {half}.m."]
    ),
)
def test_any_12_hour_time_however_written_is_its_24_hour_time(
    hour: int, minute: int, form: str
) -> None:
    half = "p" if hour >= 12 else "a"
    if form.endswith("M"):
        half = half.upper()
    text = form.format(clock=hour % 12 or 12, minute=f"{minute:02d}", half=half)
    assert tokens(text) == [f"{hour:02d}:{minute:02d}"]


# ---------------------------------------------------------------- 2. inflections, spellings


def test_a_words_inflections_spellings_and_compounds_are_one_form() -> None:
    same("30 day", "30 days", "thirty days")
    same("ship", "shipped", "ships", "shipping")
    same("processed", "processing", "processes")
    same("cancelled", "canceled", "cancels", "cancelling")
    same("policy", "policies")
    same("updated", "update", "updating")
    same("color", "colour", "colours", "coloured")
    same("authorize", "authorise", "authorised", "authorized")
    same("authorization", "authorisation")
    same("center", "centre", "centres")
    same("catalog", "catalogue", "catalogued")
    same("nonrefundable", "non-refundable", "non refundable", "Non-Refundable")
    same("email", "e-mail", "E-Mail")
    same("more recent", "more recently")
    same("week", "weekly")
    found_both_ways("Your order {} today.", "shipped", "ships")


def test_different_words_and_identifiers_keep_apart() -> None:
    assert not mentions("the deli on Main", "delivered")
    assert not mentions("a delivery fee", "delivered")  # another word, not the verb's form
    assert not mentions("the shipment", "shipped")
    assert not mentions("it is refundable", "non-refundable")
    assert not mentions("non-refundable", "refundable")
    assert not mentions("it is new", "news")
    assert not mentions("a note", "not")
    assert not mentions("I'll follow up", "UPS")
    assert not mentions("the status", "statue")
    assert not mentions("only", "on")  # an adverb's -ly comes off only where it is one
    assert not mentions("apply", "app")
    assert not mentions("likely", "like")
    assert not mentions("family", "fam")
    assert tokens("W11177 SH40258 order_cancelled") == ["w11177", "sh40258", "order_cancelled"]
    assert not mentions("status: order_cancelled", "cancelled")


@given(st.from_regex(r"[A-Za-z]{0,6}[0-9][A-Za-z0-9_]{0,8}", fullmatch=True))
def test_a_word_with_a_digit_is_never_changed(word: str) -> None:
    assert word_form(word) == word.lower()


# ---------------------------------------------------------------- 3. numbers in words


def test_numbers_said_in_words_are_their_numbers() -> None:
    same("30 days", "thirty days", "Thirty days")
    same("$374", "three hundred seventy-four dollars", "374 dollars", "374 USD")
    same("$131.50", "one hundred thirty-one dollars and fifty cents", "131 dollars 50 cents")
    same("$0.50", "fifty cents")
    same("$1,200", "twelve hundred dollars", "one thousand two hundred dollars")
    same("1644 Hillcrest", "sixteen forty-four Hillcrest")
    same("1905", "nineteen oh five")
    same("2026", "twenty twenty-six", "two thousand twenty-six", "two thousand and twenty-six")
    same("555-2950", "five five five two nine five zero", "five five five twenty-nine fifty")
    same("0193", "zero one nine three")
    same("W11177", "W one one one seven seven")
    same("3", "third", "3rd")
    same("21", "twenty-first", "21st")
    same("March 3", "March third", "third of March", "3rd of March")
    same("March 1", "March first", "first of March")
    found_both_ways("a refund within {} business", "one day", "1 day")


def test_words_that_only_look_like_numbers_stay_words() -> None:
    assert tokens("someone often phoned") == ["someon", "often", "phone"]
    for text in ("the blue one", "the one you ordered", "one of them", "no one knows"):
        assert "1" not in tokens(text), text
    assert "1" not in tokens("First, let me check.")
    assert "2" not in tokens("wait a second")
    assert tokens("a thirty second wait") == ["a", "30", "second", "wait"]
    assert tokens("Oh, I see") == ["oh", "i", "see"]
    assert not mentions("two three-packs", "23")
    assert not mentions("order 130", "thirty")


@given(st.integers(min_value=0, max_value=999_999))
def test_any_number_said_in_words_is_that_number(number: int) -> None:
    assert tokens(f"{spoken(number)} days") == tokens(f"{number} days")


UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spoken(number: int) -> str:
    """A number as it is said: 1644 is "one thousand six hundred forty-four"."""
    if number < 20:
        return UNITS[number]
    if number < 100:
        tens, units = divmod(number, 10)
        return TENS[tens] + (f"-{UNITS[units]}" if units else "")
    if number < 1000:
        hundreds, rest = divmod(number, 100)
        return f"{UNITS[hundreds]} hundred" + (f" {spoken(rest)}" if rest else "")
    thousands, rest = divmod(number, 1000)
    return f"{spoken(thousands)} thousand" + (f" {spoken(rest)}" if rest else "")


# ---------------------------------------------------------------- 4. spaced digits


def test_digits_in_groups_of_two_to_four_are_a_phone_number() -> None:
    same("612-555-2950", "612 555 29 50", "612.555.29.50", "555 29 50", "+1 612 555 2950")
    same("06 12 34 56 78", "0612345678")


def test_number_lists_amounts_and_years_are_no_phone_number() -> None:
    assert tokens("2 3 4") == ["2", "3", "4"]
    assert tokens("sizes 10 20 30 40") == ["size", "10", "20", "30", "40"]
    assert tokens("in 2024 2025 2026") == ["in", "2024", "2025", "2026"]
    assert tokens("12 500 000") == ["12", "500", "000"]
    assert tokens("$10.99 12.99") == ["10.99", "12.99"]
    assert not mentions("call 1-555-29501", "555-2950")


# ---------------------------------------------------------------- 5. spoken emails


def test_an_email_address_said_aloud_is_the_address() -> None:
    same(
        "grace.patel@example.net",
        "grace.patel at example dot net",
        "grace dot patel at example dot net",
        "grace.patel [at] example [dot] net",
        "grace.patel(at)example(dot)net",
        "Grace.Patel AT example DOT net",
    )
    found_both_ways("write to {}.", "grace dot patel at example dot net", "grace.patel@example.net")


def test_at_in_a_sentence_is_no_email_address() -> None:
    assert tokens("I'll look at it at 5") == ["i", "ll", "look", "at", "it", "at", "5"]
    assert tokens("meet me at the station") == ["meet", "me", "at", "the", "station"]
    assert "at" in tokens("we're at example.net's office")
    assert not mentions("grace at example dot net", "grace.patel@example.net")


# ---------------------------------------------------------------- 6. dates


def test_a_date_in_any_order_and_mark_is_that_date() -> None:
    same("2026-11-17", "17/11/2026", "17.11.2026", "2026/11/17", "2026.11.17", "11/17/2026")
    same("2026-11-05", "05.11.2026", "November 5, 2026", "Nov 5th, 2026")
    same("2026-03-12", "March 12, 2026", "March twelfth, 2026")
    assert mentions("Thursday, March 12", "March 12")
    assert mentions("Thursday, March 12", "2026-03-12")
    assert mentions("Thursday, March 12", "Thursday")


def test_slashed_dates_read_month_first_as_usual_and_day_first_too_and_may_is_no_date() -> None:
    assert usual("04/09/2026") == ["2026-04-09"]
    assert mentions("04/09/2026", "April 9") and mentions("04/09/2026", "September 4")
    assert tokens("17/11/2026") == ["2026-11-17"]  # no month 17: one reading only
    assert not mentions("17/11/2026", "November 11")
    assert tokens("it may be shipped") == ["it", "may", "be", "ship"]
    assert tokens("you may one day") == ["you", "may", "1", "day"]
    assert tokens("on May 1") == ["on", "--05-01"]
    assert tokens("February 31") == ["februari", "31"]  # no day of any month
    assert tokens("13/45") == ["13", "45"]


# ---------------------------------------------------------------- 7. street words


def test_a_street_word_and_its_abbreviation_are_one_word() -> None:
    for short, word in [
        ("St", "Street"),
        ("Ave", "Avenue"),
        ("Rd", "Road"),
        ("Ln", "Lane"),
        ("Blvd", "Boulevard"),
        ("Ct", "Court"),
        ("Pl", "Place"),
        ("Dr", "Drive"),
    ]:
        same(f"77 Rainey {word}", f"77 Rainey {short}.", f"77 rainey {short}")
    same("Fifth Avenue", "5th Ave")


def test_a_street_word_stays_in_its_place() -> None:
    assert not mentions("Dr. Lind will call", "Lind Drive")
    assert not mentions("77 Rainey Street", "77 Rainey Road")
    assert not mentions("1st floor", "street")


# ---------------------------------------------------------------- 8. percentages


def test_a_percentage_is_its_number_however_written() -> None:
    same("10%", "10 percent", "ten percent", "10 per cent", "10 %")
    found_both_ways("a discount of {} today", "ten percent", "10%")


def test_a_percentage_is_no_other_number() -> None:
    assert not mentions("10.5%", "10%")
    assert not mentions("110 percent", "10%")
