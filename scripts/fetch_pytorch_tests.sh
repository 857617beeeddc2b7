#!/usr/bin/env bash
# Fetches PyTorch 1.13.1's own test files (the test/ folder of Debian's source package
# `pytorch`, the sources of python3-torch) for `mimic test-torch --pytorch-files`. From Debian's
# archive only, checked against the archive's sha256; never committed to mimic.
# Destination: ${MIMIC_PYTORCH_TESTS:-$HOME/.cache/mimic/pytorch-1.13.1}/test. Quiet when done.
set -euo pipefail

VERSION=1.13.1
DEST=${MIMIC_PYTORCH_TESTS:-$HOME/.cache/mimic/pytorch-$VERSION}
DONE_MARK="$DEST/test/.mimic-fetched"
SOURCES=/etc/apt/sources.list.d/mimic-deb-src.sources

[[ -f $DONE_MARK ]] && exit 0

fail() {
  echo "mimic: PyTorch's test files not fetched: $*" >&2
  exit 1
}

# Debian's source index: a deb-src entry for the release the binary packages come from.
if ! apt-cache showsrc pytorch 2>/dev/null | grep -q "^Package: pytorch"; then
  [[ $(id -u) -eq 0 ]] || fail "no deb-src entry for Debian's archive; run this script as root"
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?}")
  cat >"$SOURCES" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq || fail "apt-get update failed after adding $SOURCES"
fi

# The orig tarball's name and sha256 as the archive's signed index gives them.
read -r sha256 _ orig < <(apt-cache showsrc "pytorch" |
  awk '/^Checksums-Sha256:/ {on = 1; next} /^[^ ]/ {on = 0}
       on && $3 ~ /^pytorch_'"$VERSION"'[^-]*\.orig\.tar\.xz$/ {print; exit}') ||
  fail "Debian's archive lists no pytorch_$VERSION*.orig.tar.xz (apt-cache showsrc pytorch)"

cache="$DEST/deb-src"
mkdir -p "$cache"
if [[ ! -f $cache/$orig ]] || ! echo "$sha256  $cache/$orig" | sha256sum --check --status; then
  # Only the orig tarball is needed; the .debian.tar.xz may be missing from a mirror, so
  # apt-get's exit code is not the verdict: the checksum below is.
  (cd "$cache" && apt-get source --download-only -qq "pytorch" >/dev/null 2>&1) || true
fi
[[ -f $cache/$orig ]] || fail "apt-get source --download-only pytorch did not download $orig"
echo "$sha256  $cache/$orig" | sha256sum --check --status ||
  fail "$cache/$orig does not match the archive's sha256 $sha256"

top=$(tar -tJf "$cache/$orig" | awk -F/ 'NR == 1 {print $1}')
rm -rf "$DEST/test" "$DEST/extract"
mkdir -p "$DEST/extract"
tar -xJf "$cache/$orig" -C "$DEST/extract" "$top/test" ||
  fail "could not extract $top/test from $cache/$orig"
mv "$DEST/extract/$top/test" "$DEST/test"
rm -rf "$DEST/extract"
touch "$DONE_MARK"
echo "mimic: PyTorch $VERSION's test files in $DEST/test"
