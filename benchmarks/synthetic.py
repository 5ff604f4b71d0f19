"""A deterministic generator of realistic repository paths, for benchmarks.

The paths imitate a large C tree such as the Linux kernel: deep directories
(``drivers/net/ethernet/intel/ixgbe/ixgbe_main.c``), ``Kconfig`` and
``Makefile`` in most directories, driver-prefixed file names and an average
length around 60 characters. The picker benchmarks and the performance probe
share this generator so their numbers are comparable.
"""

from __future__ import annotations

import random

# Real paths that benchmark queries aim at; always present.
ANCHOR_PATHS: tuple[str, ...] = (
    "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c",
    "drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c",
    "drivers/net/Kconfig",
    "mm/page_alloc.c",
    "mm/page_io.c",
    "kernel/sched/core.c",
    "fs/ext4/inode.c",
    "include/linux/sched.h",
    "Kconfig",
    "Makefile",
    "README",
)

_TOP: tuple[tuple[str, int], ...] = (
    ("drivers", 52), ("arch", 12), ("Documentation", 8), ("include", 6), ("tools", 5),
    ("fs", 5), ("sound", 4), ("net", 4), ("kernel", 1), ("mm", 1), ("lib", 1),
    ("security", 1), ("crypto", 1), ("scripts", 1), ("block", 1),
)

_WORDS: tuple[str, ...] = (
    "net", "ethernet", "wireless", "intel", "broadcom", "realtek", "mellanox", "gpu", "drm", "amd",
    "display", "dc", "core", "media", "platform", "usb", "host", "gadget", "function", "pci",
    "controller", "scsi", "ata", "block", "input", "touchscreen", "keyboard", "mouse", "iio", "adc",
    "hwmon", "thermal", "power", "supply", "regulator", "clk", "pinctrl", "gpio", "i2c", "busses",
    "spi", "mtd", "nand", "raw", "mmc", "phy", "soc", "qcom", "samsung", "rockchip", "mediatek",
    "tegra", "staging", "firmware", "crypto", "dma", "irqchip", "mfd", "misc", "leds", "video",
    "fbdev", "backlight", "tty", "serial", "watchdog", "rtc", "infiniband", "hw", "ulp", "nvme",
    "target", "md", "bcache", "remoteproc", "rpmsg", "sound", "codecs", "boot", "dts", "configs",
    "mach", "kvm", "mm", "lib", "include", "asm", "uapi", "linux", "bindings", "devicetree",
    "filesystems", "networking", "admin-guide", "selftests", "testing", "perf", "util", "bpf",
    "tests", "xfs", "btrfs", "ext4", "nfs", "cifs", "smb", "client", "server", "ipv4", "ipv6",
    "netfilter", "bluetooth", "mac80211", "sched", "debug", "trace", "events", "common", "generic",
)

_STEMS: tuple[str, ...] = (
    "ixgbe", "i40e", "ice", "igb", "e1000e", "mlx5", "bnxt", "tg3", "r8169", "amdgpu", "radeon",
    "nouveau", "i915", "xe", "ath11k", "iwlwifi", "rtw89", "brcmfmac", "mt76", "dwc3", "xhci",
    "ehci", "ohci", "sdhci", "nvmet", "lpfc", "qla2xxx", "mpt3sas", "hid", "wacom", "snd_soc",
    "rt5640", "wm8994", "tas2770", "stm32", "imx", "sunxi", "meson", "exynos", "omap", "pxa",
    "vfio", "virtio", "vhost", "kvm", "sev", "tdx", "ext4", "xfs", "btrfs", "f2fs", "ocfs2",
)

_SUFFIXES: tuple[str, ...] = (
    "main", "core", "ethtool", "lib", "common", "debugfs", "trace", "regs", "phy", "mbx", "sriov",
    "dcb", "ptp", "txrx", "xsk", "fw", "init", "irq", "dma", "pm", "sysfs", "ioctl", "ops", "hw",
    "mac", "link", "port", "queue", "ring", "stats", "devlink", "vf", "pf", "params", "nvm",
    "alloc", "io", "page", "inode", "super", "file", "dir", "namei", "xattr", "acl", "journal",
    "sched", "fair", "rt", "deadline", "clock", "timer", "cpu", "smp", "mmu", "tlb", "fault",
)

_EXTENSIONS: tuple[tuple[str, int], ...] = (
    (".c", 58), (".h", 26), (".rst", 4), (".yaml", 3), (".dts", 2), (".dtsi", 2), (".S", 1),
    (".txt", 1), (".py", 1), (".sh", 1), (".json", 1),
)


def _weighted(rng: random.Random, table: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([name for name, _ in table], weights=[w for _, w in table])[0]


def _dir_name(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.55:
        return rng.choice(_WORDS)
    if roll < 0.8:
        return rng.choice(_STEMS).replace("_", "-")
    return f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}"


def _file_name(rng: random.Random, parent: str) -> str:
    ext = _weighted(rng, _EXTENSIONS)
    prefix = parent if rng.random() < 0.6 else rng.choice(_STEMS)
    prefix = prefix.replace("-", "_")
    parts = [prefix, rng.choice(_SUFFIXES)]
    while rng.random() < 0.45:
        parts.append(rng.choice(_SUFFIXES))
    return "_".join(parts) + ext


def synthetic_paths(n: int = 80_000, seed: int = 0) -> list[str]:
    """Make ``n`` unique, repository-relative, kernel-like paths.

    Args:
        n: How many paths to produce.
        seed: Seed of the generator; the same seed gives the same list.

    Returns:
        The paths in a deterministic, non-sorted (generation) order.
    """
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []

    def add(path: str) -> None:
        if path not in seen and len(out) < n:
            seen.add(path)
            out.append(path)

    for path in ANCHOR_PATHS:
        add(path)
    while len(out) < n:
        # One directory per round, with a burst of files in it (like a driver folder).
        parts = [_weighted(rng, _TOP)]
        depth = rng.choices((1, 2, 3, 4, 5, 6, 7), weights=(2, 5, 14, 24, 25, 17, 13))[0]
        for _ in range(depth):
            parts.append(_dir_name(rng))
        directory = "/".join(parts)
        if rng.random() < 0.5:
            add(f"{directory}/Kconfig")
        if rng.random() < 0.7:
            add(f"{directory}/Makefile")
        for _ in range(rng.randint(2, 24)):
            add(f"{directory}/{_file_name(rng, parts[-1])}")
    return out
