"""docs/api.md, "Every verb": each verb of the verb table once, in the table's order, with a
request its input schema admits and an answer its output schema admits (and the status the verb
gives that answer)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pytest

from todos.agents.api.verbs import TABLE, VERBS

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
SECTION = "## Every verb"
REQUEST = re.compile(r"^Request:$")
ANSWER = re.compile(r"^Answer \((\d{3})\):$")


@dataclass
class Block:
    label: str  # the last line of prose before the fence ("Request:", "Answer (201):")
    language: str
    text: str


@dataclass
class Example:
    heading: str
    blocks: list[Block] = field(default_factory=list)


def section(markdown: str) -> str:
    """The lines of "## Every verb", up to the next ``## `` heading."""
    lines = markdown.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == SECTION]
    assert len(starts) == 1, f"docs/api.md has {len(starts)} {SECTION!r} headings, not one"
    body = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("## "):
            break
        body.append(line)
    return "\n".join(body)


def examples(text: str) -> list[Example]:
    """The ``###`` headings of the section, each with its fenced blocks and the line before each."""
    found: list[Example] = []
    label = ""
    fence: Block | None = None
    for line in text.splitlines():
        if fence is not None:
            if line.strip() == "```":
                if not found:
                    pytest.fail(f"{SECTION}: a code block comes before the first ### heading")
                found[-1].blocks.append(fence)
                fence = None
            else:
                fence.text += line + "\n"
        elif line.startswith("```"):
            fence = Block(label=label, language=line[3:].strip(), text="")
        elif line.startswith("### "):
            found.append(Example(heading=line[4:].strip().strip("`")))
            label = ""
        elif line.strip():
            label = line.strip()
    assert fence is None, f"{SECTION}: a code block is never closed"
    return found


@pytest.fixture(scope="module")
def documented() -> list[Example]:
    return examples(section(DOC.read_text()))


def test_every_verb_has_one_heading_in_the_tables_order(documented):
    headings = [example.heading for example in documented]
    for verb in VERBS:
        count = headings.count(verb)
        assert count == 1, f"{verb}: {count} '### {verb}' headings under {SECTION!r}, not one"
    known = [heading for heading in headings if heading in VERBS]
    table = [verb.name for verb in TABLE]
    for position, (got, expected) in enumerate(zip(known, table, strict=True)):
        assert got == expected, f"{expected}: expected as heading {position + 1} (the verb table's order), found {got}"


def test_no_heading_names_an_unknown_verb(documented):
    unknown = [example.heading for example in documented if example.heading not in VERBS]
    assert not unknown, f"{SECTION} has headings that name no verb: {unknown}"


def parsed(verb: str, what: str, block: Block):
    assert block.language == "json", f"{verb}: the {what} block is ```{block.language}, not ```json"
    assert "…" not in block.text, f"{verb}: the {what} elides something (…): examples are real JSON"
    try:
        return json.loads(block.text)
    except json.JSONDecodeError as error:
        pytest.fail(f"{verb}: the {what} is not JSON: {error}")


def schema_errors(verb: str, what: str, schema: dict, value) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return [
        f"{verb}: the {what} does not match the verb's schema at {error.json_path}: {error.message}"
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    ]


@pytest.mark.parametrize("verb", list(VERBS))
def test_the_request_and_answer_match_the_verbs_schemas(documented, verb):
    matching = [example for example in documented if example.heading == verb]
    if len(matching) != 1:
        pytest.fail(f"{verb}: {len(matching)} '### {verb}' headings under {SECTION!r}, not one")
    blocks = matching[0].blocks
    labels = [block.label for block in blocks]
    assert len(blocks) == 2, f"{verb}: {len(blocks)} code blocks, not a request and an answer (labels: {labels})"
    request, answer = blocks
    assert REQUEST.match(request.label), f"{verb}: the first block is not under 'Request:' but {request.label!r}"
    status = ANSWER.match(answer.label)
    assert status, f"{verb}: the second block is not under 'Answer (<status>):' but {answer.label!r}"

    body = parsed(verb, "request", request)
    answered = parsed(verb, "answer", answer)
    errors = schema_errors(verb, "request", VERBS[verb].input, body)
    errors += schema_errors(verb, "answer", VERBS[verb].output, answered)
    assert not errors, "\n".join(errors)
    stated, gives = int(status.group(1)), VERBS[verb].status(answered)
    assert stated == gives, f"{verb}: the answer is stated as {stated}, but the verb answers it with {gives}"


def test_the_parser_finds_what_is_wrong():
    """The checks above can fail: a missing answer, a misnamed heading and an elision are seen."""
    broken = examples(
        "### create_for\n\nRequest:\n\n```json\n{}\n```\n\n### lease_seconds\n\nAnswer (200):\n\n```json\n"
        '{"todo": {"id": "td_…"}}\n```\n'
    )
    assert [example.heading for example in broken] == ["create_for", "lease_seconds"]
    assert [block.label for block in broken[0].blocks] == ["Request:"]
    assert schema_errors("create_for", "request", VERBS["create_for"].input, {}) == [
        "create_for: the request does not match the verb's schema at $: 'queue' is a required property",
        "create_for: the request does not match the verb's schema at $: 'title' is a required property",
    ]
    with pytest.raises(AssertionError, match="create_for: the answer elides"):
        parsed("create_for", "answer", broken[1].blocks[0])
