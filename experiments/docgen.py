"""Generated text in committed docs: marked blocks, templates, and the check that keeps them in step.

An experiment's script prints its tables and figures from committed CSVs. A doc holds that printout
either in a block between the lines `<!-- NAME:begin -->` and `<!-- NAME:end -->` (a README with
hand-written text around it) or whole (a doc rendered from a template, whose `{{key}}` fields the
script fills). A ctest test runs the script with `--check`: it fails, with a diff, when the
committed doc is not what the script prints. Users: experiments/fa_paper_fig2/plot.py,
experiments/validation/accuracy_table.py, experiments/teaching/render.py,
experiments/hbm_article/report.py.
"""
import difflib
import re
import sys

FIELD = re.compile(r"\{\{([A-Za-z0-9_.]+)\}\}")


def markers(name):
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def block_of(text, name):
    """The text between NAME's markers, or None when text lacks either marker."""
    begin, end = markers(name)
    if begin not in text or end not in text:
        return None
    return text.split(begin, 1)[1].split(end, 1)[0]


def replace_block(text, name, block):
    """text with NAME's block replaced by `block` (blank lines kept around it); KeyError without markers."""
    begin, end = markers(name)
    if begin not in text or end not in text:
        raise KeyError(f"no {begin} ... {end} block")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return f"{head}{begin}\n{block.strip(chr(10))}\n{end}{tail}"


def fill(template, values):
    """template with each {{key}} replaced by str(values[key]); ValueError on a field without a
    value or a value without a field (the template and its script must name the same figures)."""
    fields = set(FIELD.findall(template))
    missing, unused = sorted(fields - set(values)), sorted(set(values) - fields)
    if missing or unused:
        raise ValueError(f"template fields without a value: {missing}; values without a field: {unused}")
    return FIELD.sub(lambda m: str(values[m.group(1)]), template)


def md_table(header, rows):
    """A markdown table (a list of lines): columns right-aligned, except those whose header starts
    with "<" (the "<" is dropped)."""
    out = ["| " + " | ".join(h.lstrip("<") for h in header) + " |",
           "|" + "|".join("---" if h.startswith("<") else "---:" for h in header) + "|"]
    return out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def check(path, generated, printer, name=None):
    """0 when `path` (its NAME block if a name is given) equals `generated`, blank lines at either
    end ignored; else prints a unified diff and how to fix it, and returns 1. `printer`: the
    command that regenerates the text, for the messages."""
    text = open(path, encoding="utf-8").read()
    what = f"{path}'s {name} block" if name else path
    if name is not None:
        text = block_of(text, name)
        if text is None:
            begin, end = markers(name)
            print(f"{path}: no {begin} ... {end} block")
            return 1
    committed, wanted = text.strip("\n"), generated.strip("\n")
    if committed == wanted:
        print(f"{what} matches {printer}")
        return 0
    sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), wanted.splitlines(True),
                                               f"{what} (committed)", f"{printer} (from the committed data)"))
    print(f"\n{what} differs from what {printer} prints from the committed data; run it and commit the result")
    return 1
