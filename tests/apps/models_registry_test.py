"""`tessera models add / list / remove / default` and the model every command
uses when none is named (issue 34): the data directory ($TESSERA_DATA_DIR,
else $XDG_DATA_HOME/tessera, else ~/.local/share/tessera), a copy or a link
registered there, --model NAME and $TESSERA_MODEL=NAME, the default, the
errors; and, from a copy of the binary outside the build tree (as an
installed one), the no-model error saying what to do.

Usage: models_registry_test.py TESSERA_BINARY SOURCE_DIR
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


def check(cond, what):
    if not cond:
        raise AssertionError(what)


class Cli:
    def __init__(self, binary, env):
        self.binary, self.env = binary, env

    def __call__(self, *args, stdin=None, **env):
        return subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=300,
                              input=stdin, env={**self.env, **env})

    def listing(self, **env):
        r = self("models", "list", "--json", **env)
        check(r.returncode == 0, r.stderr)
        return json.loads(r.stdout)

    def embed(self, *args, **env):
        """The one row `tessera embed` writes for a short text, and its stderr."""
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "rows.jsonl")
            r = self("embed", "-", "-o", str(out), *args, stdin="a short text\n", **env)
            check(r.returncode == 0, r.stderr)
            return json.loads(out.read_text().splitlines()[0])["embedding"]


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    models = source / "data" / "models"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        data = tmp / "data"
        env = {k: v for k, v in os.environ.items()
               if k not in ("TESSERA_MODEL", "XDG_DATA_HOME")}
        env["TESSERA_DATA_DIR"] = str(data)
        cli = Cli(binary, env)

        # The data directory's variables, in order.
        check(cli.listing()["data_dir"] == str(data), cli.listing())
        listing = cli.listing(TESSERA_DATA_DIR="", XDG_DATA_HOME=str(tmp / "xdg"))
        check(listing["data_dir"] == str(tmp / "xdg" / "tessera"), listing)
        listing = cli.listing(TESSERA_DATA_DIR="", HOME=str(tmp / "home"))
        check(listing["data_dir"] == str(tmp / "home" / ".local" / "share" / "tessera"), listing)
        check(listing["data_dir_source"] == "$HOME", listing)

        # Nothing registered yet.
        r = cli("models", "list")
        check(r.returncode == 0 and "no models registered" in r.stdout, r.stdout)
        check(cli.listing()["models"] == [] and cli.listing()["default"] is None, cli.listing())

        # A copy; the first model added is the default.
        r = cli("models", "add", str(models / "tiny-bert"))
        check(r.returncode == 0, r.stderr)
        check("registered tiny-bert" in r.stdout and "the default model" in r.stdout, r.stdout)
        copy = data / "models" / "tiny-bert"
        check(copy.is_dir() and not copy.is_symlink() and (copy / "config.json").is_file(),
              "models add did not copy the folder")
        # A link under another name.
        r = cli("models", "add", str(models / "tiny-mpnet"), "--link", "--name", "mp")
        check(r.returncode == 0 and "the default" not in r.stdout, (r.stdout, r.stderr))
        check((data / "models" / "mp").is_symlink(), "--link did not link")
        listing = cli.listing()
        check([m["name"] for m in listing["models"]] == ["mp", "tiny-bert"], listing)
        check(listing["default"] == "tiny-bert", listing)
        check(listing["models"][0]["link"] == str(models / "tiny-mpnet"), listing)
        check(listing["without_model"]["dir"] == str(copy), listing)
        r = cli("models", "list")
        check("tiny-bert (default)" in r.stdout and "-> " + str(models / "tiny-mpnet") in r.stdout,
              r.stdout)
        r = cli("models")  # the architectures, then the registered models
        check("WordPiece" in r.stdout and "mp, tiny-bert (default)" in r.stdout, r.stdout)

        # What is refused, registering nothing: a name taken, a folder that is
        # no model, a name that is no folder name, a folder that is not there.
        empty = tmp / "empty"
        empty.mkdir()
        for args, part in (((str(models / "tiny-bert"),), "already registered"),
                           ((str(empty),), "is not a model tessera runs"),
                           ((str(models / "tiny-bert"), "--name", "../x"), "one folder name"),
                           ((str(tmp / "missing"),), "not a directory")):
            r = cli("models", "add", *args)
            check(r.returncode == 2 and part in r.stderr, (args, r.returncode, r.stderr))
        check(len(cli.listing()["models"]) == 2, cli.listing())

        # The model a command uses: the default; --model NAME; $TESSERA_MODEL=NAME;
        # a directory still wins over a name.
        bert = cli.embed("--model", str(models / "tiny-bert"))
        mpnet = cli.embed("--model", str(models / "tiny-mpnet"))
        check(bert != mpnet, "the two tiny models give the same row")
        check(cli.embed() == bert, "no --model: not the default model")
        check(cli.embed("--model", "mp") == mpnet, "--model NAME: not the registered model")
        check(cli.embed(TESSERA_MODEL="mp") == mpnet, "TESSERA_MODEL=NAME: not that model")
        check(cli.embed("--model", "tiny-bert", TESSERA_MODEL="mp") == bert, "--model lost")
        r = cli("models", "--explain", "mp")
        check(r.returncode == 0 and "mpnet" in r.stdout, r.stdout)
        r = cli("embed", "-", "-o", str(tmp / "x.jsonl"), "--model", "nope", stdin="x\n")
        check(r.returncode == 2 and '"nope" is neither a model directory' in r.stderr
              and "mp, tiny-bert registered in" in r.stderr, r.stderr)

        # `models default`; a link removed leaves its folder; removing the
        # default leaves the one model there is as the default.
        r = cli("models", "default", "mp")
        check(r.returncode == 0 and cli.listing()["default"] == "mp", (r.stderr, cli.listing()))
        check(cli.embed() == mpnet, "models default: not the model used")
        r = cli("models", "default", "nope")
        check(r.returncode == 2 and "no model named nope" in r.stderr, r.stderr)
        r = cli("models", "remove", "mp")
        check(r.returncode == 0 and "the default model is now tiny-bert" in r.stdout, r.stdout)
        check(not (data / "models" / "mp").exists() and (models / "tiny-mpnet").is_dir(),
              "remove of a link")
        check(cli.listing()["default"] == "tiny-bert", cli.listing())
        r = cli("models", "remove", "nope")
        check(r.returncode == 2 and "registered: tiny-bert" in r.stderr, r.stderr)

        # The binary outside its build tree (as installed) has no checkout
        # model to fall back on: with nothing registered it says what to do.
        installed = tmp / "bin" / "tessera"
        installed.parent.mkdir()
        shutil.copy2(binary, installed)
        outside = Cli(str(installed), {**env, "TESSERA_DATA_DIR": str(tmp / "empty-data")})
        r = outside("embed", "-", "-o", str(tmp / "y.jsonl"), stdin="x\n")
        check(r.returncode == 2 and not (tmp / "y.jsonl").exists(), (r.returncode, r.stderr))
        for part in ("no model", "tessera models add DIR", str(tmp / "empty-data" / "models"),
                     "--model DIR", "TESSERA_MODEL"):
            check(part in r.stderr, (part, r.stderr))
        check(outside.listing()["without_model"].get("error", "").startswith("no model"),
              outside.listing())
        # ... and with one registered, uses it.
        r = outside("models", "add", str(models / "tiny-bert"))
        check(r.returncode == 0, r.stderr)
        check(outside.embed() == bert, "the installed binary did not use the registered model")
    print("models registry: OK")


if __name__ == "__main__":
    main()
