"""The floor under any wheelfit command: a one-command typer app that parses ``--json`` and prints ``{}``.

``bench/startup.py`` times it beside wheelfit, in the same rounds, so a ratio target can be read against what the
design card's own parser costs on the machine at hand. ``--with-packaging`` also imports what every plan needs to
read a requirement and the target's wheel tags (packaging's requirements, specifiers, versions and tags) and json.
"""

import sys

import typer

if "--with-packaging" in sys.argv:
    sys.argv.remove("--with-packaging")
    import json  # noqa: F401

    import packaging.requirements
    import packaging.tags  # noqa: F401

app = typer.Typer(add_completion=False)


@app.command()
def floor(json_: bool = typer.Option(False, "--json")) -> None:
    print("{}")


if __name__ == "__main__":
    app()
