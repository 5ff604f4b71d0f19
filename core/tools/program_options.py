"""The options of each allowlisted program, spelled out: what the command policy knows.

Allowlisted programs run without approval, so their specs are *strict*: an option
not listed here is refused, never passed through (see
:class:`core.tools.command_syntax.OptionSpec`). Long options are matched by their
full name after unique-prefix expansion for programs that accept abbreviations
(GNU coreutils, grep, git), so ``--exclude-fr=F`` is checked as
``--exclude-from=F``.

Sources: the ``--help`` output and manuals of GNU coreutils 9.1 (ls, cat, head,
tail, wc, sort, uniq, nl, stat), GNU grep 3.8, file 5.44, ripgrep 13/14, fd 8/9 and
git 2.39 (git-ls-files(1), git-grep(1)).
"""

from __future__ import annotations

from core.tools.command_syntax import OptionSpec

SYMLINK = "follows symbolic links, which may lead outside the project"
RUNS = "runs other programs"
WRITES = "writes files"
READS_LIST = "reads a list of files from a file"


def _longs(text: str) -> frozenset[str]:
    return frozenset(f"--{word}" for word in text.split())


LS = OptionSpec(
    short_flags="aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1",
    short_args="ITw",
    long_args=_longs("block-size format hide ignore indicator-style quoting-style sort tabsize time time-style width"),
    long_flags=_longs(
        "all almost-all author escape ignore-backups directory dired file-type full-time group-directories-first "
        "no-group human-readable si dereference-command-line dereference-command-line-symlink-to-dir inode "
        "kibibytes literal numeric-uid-gid hide-control-chars show-control-chars quote-name reverse recursive size "
        "context zero help version"),
    optional_args=_longs("color hyperlink classify"),
    forbidden={"-L": SYMLINK, "--dereference": SYMLINK},
)

GREP = OptionSpec(
    short_flags="EFGPiywxzsvVcLloqbnHhZTraIUu0123456789R",
    short_args="efmABCdD",
    long_args=_longs("regexp file max-count label after-context before-context context directories devices include "
                     "exclude exclude-from exclude-dir binary-files group-separator"),
    long_flags=_longs(
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp line-regexp "
        "null-data no-messages invert-match version help count files-with-matches files-without-match "
        "only-matching quiet silent byte-offset line-number no-line-number with-filename no-filename null "
        "initial-tab text recursive dereference-recursive line-buffered binary no-group-separator "
        "unix-byte-offsets"),
    optional_args=_longs("color colour"),
)
GREP_LISTING = frozenset({"-l", "-L", "-c", "-q", "--files-with-matches", "--files-without-match", "--count",
                          "--quiet", "--silent"})

RG = OptionSpec(
    abbrev=False,
    short_flags="aAbcHhiIlnNopqsSuUvVwx0BC",
    short_args="efgtTmABCjMrdE",
    long_args=_longs(
        "regexp file glob iglob type type-not type-add type-clear max-count after-context before-context context "
        "threads max-columns encoding replace max-depth maxdepth ignore-file path-separator sort sortr color colors "
        "context-separator field-match-separator field-context-separator max-filesize dfa-size-limit "
        "regex-size-limit engine hyperlink-format"),
    long_flags=_longs(
        "files files-with-matches files-without-match count count-matches line-number no-line-number column "
        "no-column with-filename no-filename heading no-heading null null-data only-matching ignore-case "
        "case-sensitive smart-case word-regexp line-regexp fixed-strings invert-match hidden no-hidden no-ignore "
        "no-ignore-vcs no-ignore-parent no-ignore-dot no-ignore-global no-ignore-exclude no-ignore-files "
        "no-ignore-messages no-messages text no-text binary no-binary multiline no-multiline multiline-dotall "
        "pcre2 no-pcre2 auto-hybrid-regex crlf no-crlf vimgrep json no-json stats trim no-trim quiet byte-offset "
        "passthru passthrough one-file-system no-config no-unicode unicode unrestricted debug trace type-list "
        "version help sort-files line-buffered block-buffered mmap no-mmap pretty include-zero "
        "max-columns-preview no-require-git glob-case-insensitive ignore-file-case-insensitive stop-on-nonmatch "
        "no-follow no-search-zip no-pre fixed-strings no-fixed-strings no-heading no-max-columns-preview"),
    forbidden={"--pre": RUNS, "--pre-glob": RUNS, "-z": "runs decompression programs",
               "--search-zip": "runs decompression programs", "--hostname-bin": RUNS, "-L": SYMLINK,
               "--follow": SYMLINK},
)
RG_LISTING = frozenset({"--files", "-l", "--files-with-matches", "--files-without-match", "-c", "--count",
                        "--count-matches", "-q", "--quiet", "--type-list"})

FD = OptionSpec(
    abbrev=False,
    short_flags="HIusigFalp01qhV",
    short_args="dteESjco",
    long_args=_longs(
        "extension type exclude max-depth min-depth exact-depth size changed-within changed-before owner color "
        "threads max-results base-directory search-path ignore-file path-separator format batch-size "
        "max-buffer-time and hyperlink"),
    long_flags=_longs(
        "hidden no-hidden no-ignore ignore unrestricted no-ignore-vcs ignore-vcs no-ignore-parent case-sensitive "
        "ignore-case glob regex fixed-strings absolute-path relative-path list-details full-path print0 prune "
        "quiet show-errors one-file-system strip-cwd-prefix help version no-require-git no-global-ignore-file "
        "no-follow"),
    forbidden={"-x": RUNS, "--exec": RUNS, "-X": RUNS, "--exec-batch": RUNS, "-L": SYMLINK, "--follow": SYMLINK},
)

# Viewers and filters: read the files named (checked as reads) or their standard input.
VIEWERS: dict[str, OptionSpec] = {
    "cat": OptionSpec(short_flags="AbeEnstTuv", long_flags=_longs(
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version")),
    "head": OptionSpec(short_flags="qvz0123456789", short_args="nc", long_args=_longs("lines bytes"),
                       long_flags=_longs("quiet silent verbose zero-terminated help version")),
    "tail": OptionSpec(short_flags="qvzfFr0123456789", short_args="ncs",
                       long_args=_longs("lines bytes sleep-interval pid max-unchanged-stats"),
                       long_flags=_longs("retry quiet silent verbose zero-terminated help version"),
                       optional_args=_longs("follow")),
    "wc": OptionSpec(short_flags="cmlLw", long_flags=_longs("bytes chars lines max-line-length words help version"),
                     optional_args=_longs("total"), forbidden={"--files0-from": READS_LIST}),
    "nl": OptionSpec(short_flags="p", short_args="bdfhilnsvw",
                     long_args=_longs("body-numbering section-delimiter footer-numbering header-numbering "
                                      "line-increment join-blank-lines number-format number-separator "
                                      "starting-line-number number-width"),
                     long_flags=_longs("no-renumber help version")),
    "file": OptionSpec(short_flags="bcEhiklNnprsv0", short_args="eFP",
                       long_args=_longs("exclude exclude-quiet separator parameter"),
                       long_flags=_longs("brief checking-printout mime mime-type mime-encoding no-pad no-buffer "
                                         "preserve-date raw special-files keep-going list no-dereference print0 "
                                         "extension apple help version"),
                       forbidden={"-L": SYMLINK, "--dereference": SYMLINK, "-m": "reads a magic file",
                                  "--magic-file": "reads a magic file", "-f": READS_LIST, "--files-from": READS_LIST,
                                  "-z": "may run decompression programs", "-Z": "may run decompression programs",
                                  "--uncompress": "may run decompression programs",
                                  "--uncompress-noreport": "may run decompression programs",
                                  "-S": "turns off its sandbox", "--no-sandbox": "turns off its sandbox",
                                  "-C": WRITES, "--compile": WRITES}),
    "stat": OptionSpec(short_flags="ft", short_args="c", long_args=_longs("format printf cached"),
                       long_flags=_longs("file-system terse help version"),
                       forbidden={"-L": SYMLINK, "--dereference": SYMLINK}),
    "sort": OptionSpec(
        short_flags="bdfghiMnRrVcCmsuz", short_args="ktS",
        long_args=_longs("key field-separator buffer-size parallel batch-size sort"),
        long_flags=_longs("ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
                          "human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse "
                          "version-sort merge stable unique zero-terminated debug help version"),
        optional_args=_longs("check"),
        forbidden={"-o": WRITES, "--output": WRITES, "--compress-program": RUNS, "-T": WRITES,
                   "--temporary-directory": WRITES, "--files0-from": READS_LIST, "--random-source": "reads a file"},
    ),
    "uniq": OptionSpec(short_flags="cdDiuz", short_args="fsw",
                       long_args=_longs("skip-fields skip-chars check-chars"),
                       long_flags=_longs("count repeated unique ignore-case zero-terminated help version"),
                       optional_args=_longs("all-repeated group")),
}
FILTERS = frozenset({"head", "tail", "sort", "uniq", "wc"})
"""Programs that may follow ``|`` without approval (plus grep)."""

# git ls-files and git grep: git's parse-options accepts unique prefixes and --no-<option>.
GIT_LS_FILES = OptionSpec(
    short_flags="cdoiskmuztvfh",
    short_args="xX",
    long_args=_longs("exclude exclude-from exclude-per-directory with-tree format"),
    long_flags=_longs("cached deleted others ignored stage killed modified unmerged directory no-empty-directory "
                      "eol full-name error-unmatch exclude-standard debug deduplicate sparse resolve-undo "
                      "no-cached no-deleted no-others no-ignored no-stage no-killed no-modified no-unmerged "
                      "no-directory empty-directory no-full-name no-exclude-standard no-debug no-deduplicate"),
    optional_args=_longs("abbrev"),
    forbidden={"--recurse-submodules": "runs git in submodules, whose configuration is not checked"},
)
GIT_GREP = OptionSpec(
    short_flags="aiIwvhHEGFPnlLzocpWrqh0123456789",
    short_args="efABCm",
    long_args=_longs("max-depth threads context after-context before-context max-count"),
    long_flags=_longs(
        "cached untracked no-index no-exclude-standard exclude-standard text ignore-case word-regexp "
        "invert-match full-name extended-regexp basic-regexp fixed-strings perl-regexp line-number column "
        "files-with-matches name-only files-without-match null only-matching count break heading show-function "
        "function-context recursive no-recursive and or not all-match quiet no-textconv no-color no-line-number "
        "no-column no-null no-break no-heading no-full-name no-ignore-case no-word-regexp no-invert-match "
        "no-all-match"),
    optional_args=_longs("color"),
    forbidden={"-O": RUNS, "--open-files-in-pager": RUNS, "--textconv": "runs conversion programs from git config",
               "--ext-grep": RUNS, "--recurse-submodules": "runs git in submodules, whose configuration is not checked"},
)
GIT_GREP_LISTING = frozenset({"-l", "-L", "-c", "-q", "--name-only", "--files-with-matches", "--files-without-match",
                              "--count", "--quiet"})
