"""FileIndex: git-tracked plus untracked-not-ignored files, .gitignore outside git, refresh, metadata."""

from __future__ import annotations

import threading
from pathlib import Path

from core.memory.index import FileIndex, language_of, top_level_symbols
from tests.memory.conftest import git

FILES = {
    ".gitignore": "*.log\nbuild/\n!keep.log\n",
    "src/app.py": "def main():\n    pass\n",
    "src/notes.log": "noise\n",
    "keep.log": "kept\n",
    "build/out.js": "x\n",
    "sub/.gitignore": "secret.txt\n",
    "sub/secret.txt": "s\n",
    "sub/visible.txt": "v\n",
    "node_modules/pkg/index.js": "module.exports = 1\n",
}


def test_git_lists_tracked_and_untracked_not_ignored(make_tree) -> None:
    root = make_tree(FILES, git_tracked=["src/app.py", ".gitignore"])
    (root / "new_untracked.py").write_text("x = 1\n")
    index = FileIndex(root)
    paths = set(index.build())
    assert index.uses_git and index.complete
    assert {"src/app.py", ".gitignore", "new_untracked.py", "keep.log", "sub/visible.txt", "sub/.gitignore"} <= paths
    assert "node_modules/pkg/index.js" in paths  # junk is only skipped when ignored
    assert not paths & {"src/notes.log", "build/out.js", "sub/secret.txt"}


def test_git_tracked_file_deleted_from_disk_is_not_listed(make_tree) -> None:
    root = make_tree({"a.py": "", "b.py": ""}, git_tracked=["a.py", "b.py"])
    (root / "b.py").unlink()
    assert FileIndex(root).build() == ["a.py"]


def test_files_gone_from_the_work_tree_are_the_ones_git_says(make_tree) -> None:
    """The index checks deletion with one listing per directory; git's own ``--deleted`` is the judge."""
    files = {f"d{i % 7}/sub{i % 3}/f{i}.c": "" for i in range(60)}
    files.update({"top.c": "", "Case.c": "", "x/y/z.c": "", "gone_dir/a.c": "", "was_dir/b.c": "", "odd \u00e9\u00e8.c": ""})
    root = make_tree(files, git_tracked=list(files))
    (root / "link").symlink_to("nowhere")  # a dangling link is a file git tracks, and lstat finds
    git(root, "add", "link")
    git(root, "commit", "-q", "-m", "link")
    for rel in ("d1/sub1/f1.c", "d3/sub0/f3.c", "top.c", "odd \u00e9\u00e8.c"):
        (root / rel).unlink()
    for rel in ("gone_dir/a.c", "x/y/z.c"):
        (root / rel).unlink()
    (root / "gone_dir").rmdir()
    (root / "x" / "y").rmdir()
    (root / "was_dir" / "b.c").unlink()
    (root / "was_dir").rmdir()
    (root / "was_dir").write_text("now a file\n")  # the tracked was_dir/b.c: ENOTDIR
    deleted = {p for p in git(root, "ls-files", "-z", "--deleted").split("\0") if p}
    assert len(deleted) == 7
    tracked = {p for p in git(root, "ls-files", "-z", "--cached").split("\0") if p}
    index = FileIndex(root)
    assert set(index.build()) == (tracked - deleted) | {"was_dir"}
    assert set(index.refresh()[1]) == set() and set(index.paths) == (tracked - deleted) | {"was_dir"}


def test_walk_outside_git_honours_nested_gitignore(make_tree) -> None:
    root = make_tree(FILES)
    (root / ".git").mkdir()  # a bare .git folder without a repo must never be entered
    (root / ".git" / "config").write_text("x")
    index = FileIndex(root)
    paths = set(index.build())
    assert not index.uses_git
    assert paths == {
        ".gitignore", "src/app.py", "keep.log", "sub/.gitignore", "sub/visible.txt", "node_modules/pkg/index.js",
    }


def test_walk_ignores_node_modules_when_gitignore_says_so(make_tree) -> None:
    root = make_tree({".gitignore": "node_modules/\n", "a.js": "", "node_modules/p/i.js": ""})
    assert FileIndex(root).build() == [".gitignore", "a.js"]


def test_build_publishes_batches_and_generation(make_tree, monkeypatch) -> None:
    import core.memory.index as index_module

    monkeypatch.setattr(index_module, "BATCH_SIZE", 3)
    root = make_tree({f"f{i}.txt": "" for i in range(10)}, git_tracked=[])
    index = FileIndex(root)
    batches: list[list[str]] = []
    before = index.generation
    index.build(on_batch=batches.append)
    assert [len(b) for b in batches] == [3, 3, 3, 1]
    assert sorted(sum(batches, [])) == sorted(index.paths)
    assert index.generation >= before + len(batches)


def test_build_runs_in_a_thread(make_tree) -> None:
    root = make_tree({"a.py": "", "b/c.py": ""}, git_tracked=["a.py"])
    index = FileIndex(root)
    thread = threading.Thread(target=index.build)
    thread.start()
    thread.join(10)
    assert index.complete and sorted(index.paths) == ["a.py", "b/c.py"]


def test_refresh_sees_added_and_removed_files(make_tree) -> None:
    root = make_tree({"a.py": "", "b.py": ""}, git_tracked=["a.py", "b.py"])
    index = FileIndex(root)
    index.build()
    generation = index.generation
    (root / "c.py").write_text("")
    git(root, "rm", "-q", "b.py")
    added, removed = index.refresh()
    assert added == ["c.py"] and removed == ["b.py"]
    assert sorted(index.paths) == ["a.py", "c.py"] and "c.py" in index and "b.py" not in index
    assert index.generation > generation


def test_metadata_is_lazy_cached_and_invalidated(make_tree) -> None:
    root = make_tree({
        "m.py": "import os\n\ndef alpha():\n    def inner(): pass\n\nasync def beta():\n    pass\n\nclass Gamma:\n    def method(self): pass\n",
        "blob.bin": "",
    })
    (root / "blob.bin").write_bytes(b"\x00\x01binary")
    index = FileIndex(root)
    index.build()
    meta = index.metadata("m.py")
    assert meta is not None and meta.language == "python" and meta.symbols == ("alpha", "beta", "Gamma")
    assert meta.size == (root / "m.py").stat().st_size
    assert index.metadata("m.py") is meta  # cached
    (root / "m.py").write_text("def delta():\n    pass\n")
    assert index.metadata("m.py").symbols == ("delta",)
    assert index.metadata("blob.bin").binary
    assert index.metadata("missing.py") is None


def test_symbols_for_other_languages() -> None:
    ts = "export default class Shell {}\nexport function run() {}\ninterface Props {}\nconst x = 1\n  function nested() {}\n"
    assert top_level_symbols(ts, "typescript") == ("Shell", "run", "Props", "x")
    go = "package main\n\nfunc (s *Server) Serve() {}\nfunc main() {}\ntype Config struct{}\n"
    assert top_level_symbols(go, "go") == ("Serve", "main", "Config")
    rust = "pub fn start() {}\nstruct Inner;\npub(crate) enum Mode {}\nimpl Foo {}\n    fn hidden() {}\n"
    assert top_level_symbols(rust, "rust") == ("start", "Inner", "Mode")
    assert language_of("drivers/Kconfig") == "kconfig" and language_of("a/b.tsx") == "typescript"
    assert language_of("noext") == ""


def test_relative_maps_inside_paths_only(tmp_path: Path) -> None:
    index = FileIndex(tmp_path)
    assert index.relative(tmp_path / "a" / "b.py") == "a/b.py"
    assert index.relative("a/../c.py") == "c.py"
    assert index.relative("/etc/passwd") is None
