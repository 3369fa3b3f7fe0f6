#!/bin/sh
# Ze Harness native installer (reference "Install"): POSIX sh, curl, openssl, mktemp, tar.
#
#   curl -fsSL https://downloads.ze.dev/install.sh | sh
#   curl -fsSL https://downloads.ze.dev/install.sh | sh -s -- --channel dev
#   curl -fsSL https://downloads.ze.dev/install.sh | sh -s -- --version 0.3.0
#
# Flags: --channel stable|dev, --version X.Y.Z (a pin), --dir DIR (the launcher's directory,
# default ~/.ze-harness/bin), --no-modify-path, --no-restart-daemon, --origin URL (default
# $ZE_HARNESS_RELEASE_ORIGIN, else https://downloads.ze.dev).
#
# Nothing is activated before the channel pointer (signed for this channel, not older than the
# one last accepted here), the manifest (signed, the one the pointer names) and the archive
# (its SHA-256 in the signed manifest) are verified with the certificate embedded below.
set -eu

channel=stable
pin=
bindir=
modify_path=1
restart_daemon=1
origin=${ZE_HARNESS_RELEASE_ORIGIN:-https://downloads.ze.dev}

say() { printf '%s\n' "$*" >&2; }
die() {
  say "ze-harness install: $*"
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --channel) [ $# -ge 2 ] || die "--channel needs a value"; channel=$2; shift 2 ;;
    --channel=*) channel=${1#*=}; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a value"; pin=$2; shift 2 ;;
    --version=*) pin=${1#*=}; shift ;;
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; bindir=$2; shift 2 ;;
    --dir=*) bindir=${1#*=}; shift ;;
    --origin) [ $# -ge 2 ] || die "--origin needs a value"; origin=$2; shift 2 ;;
    --origin=*) origin=${1#*=}; shift ;;
    --no-modify-path) modify_path=0; shift ;;
    --no-restart-daemon) restart_daemon=0; shift ;;
    -h | --help)
      say "usage: install.sh [--channel stable|dev | --version X.Y.Z] [--dir DIR] [--no-modify-path] [--no-restart-daemon] [--origin URL]"
      exit 0
      ;;
    *) die "unknown argument: $1" ;;
  esac
done

case $channel in stable | dev) ;; *) die "--channel must be stable or dev, not $channel" ;; esac
if [ -n "$pin" ]; then
  printf '%s\n' "$pin" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$' || die "--version must look like 1.2.3, not $pin"
fi
origin=${origin%/}
[ -n "${HOME:-}" ] || die "HOME is not set"
for tool in curl openssl mktemp tar; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done

case $(uname -s) in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "unsupported system: $(uname -s)" ;;
esac
case $(uname -m) in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "unsupported machine: $(uname -m)" ;;
esac
platform=$os-$arch
ext=tar.gz
[ "$os" = darwin ] && ext=zip

case ${XDG_DATA_HOME:-} in
  /*) data=$XDG_DATA_HOME/ze-harness ;;
  *) data=$HOME/.local/share/ze-harness ;;
esac
versions=$data/versions
record=$data/install.json
[ -n "$bindir" ] || bindir=$HOME/.ze-harness/bin
case $bindir in /*) ;; *) bindir=$(pwd)/$bindir ;; esac
launcher=$bindir/ze-harness

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ze-harness-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

cat >"$tmp/cert.pem" <<'ZE_RELEASE_CERTIFICATE'
@RELEASE_CERTIFICATE@
ZE_RELEASE_CERTIFICATE
grep -q 'BEGIN CERTIFICATE' "$tmp/cert.pem" || die "this installer carries no release certificate (publish it with release:publish --cert)"
openssl x509 -in "$tmp/cert.pem" -pubkey -noout >"$tmp/key.pem" 2>/dev/null || die "the embedded release certificate is unreadable"

# fetch PATH OUT [MAX-BYTES]: no more than expected is written (default 1 MiB: pointers, manifests
# and signatures; an archive's limit is the size in its signed manifest), so a hostile mirror's
# endless answer is cut off instead of filling the disk. `ulimit -f` counts 512-byte blocks (bash
# outside POSIX mode counts 1024: a looser cap, still finite, and the size is checked after).
fetch() {
  limit=${3:-1048576}
  if ! (ulimit -f $((limit / 512 + 1)) && exec curl -fsSL --retry 2 --max-filesize "$limit" -o "$2" "$origin/$1") 2>"$tmp/curl.err"; then
    [ -f "$2" ] && [ "$(wc -c <"$2")" -gt "$limit" ] && die "$1 is larger than the $limit bytes expected; nothing was installed"
    say "$(cat "$tmp/curl.err")"
    die "cannot download $origin/$1"
  fi
  [ "$(wc -c <"$2")" -le "$limit" ] || die "$1 is larger than the $limit bytes expected; nothing was installed"
}
sha256() {
  openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
}
# verify FILE BASE64-SIGNATURE-FILE WHAT
verify() {
  openssl base64 -d -A -in "$2" -out "$2.bin" 2>/dev/null || die "$3: the signature is not base64"
  openssl dgst -sha256 -verify "$tmp/key.pem" -signature "$2.bin" "$1" >/dev/null 2>&1 || die "$3: the signature does not verify with the release certificate; nothing was installed"
}
# field NAME FILE: a string or number field of one-line JSON written by release:publish
field() {
  sed -n "s/.*\"$1\": *\"\{0,1\}\([^\",}]*\)\"\{0,1\}[,}].*/\1/p" "$2" | head -n 1
}

# number VALUE: VALUE when it is a non-negative integer, else 0
number() {
  case $1 in '' | *[!0-9]*) printf '0' ;; *) printf '%s' "$1" ;; esac
}
# The highest pointer sequence accepted here on each channel, kept across channel switches and
# pins (an older installer's record holds only its own channel's, as "sequence").
stable_seen=0
dev_seen=0
if [ -f "$record" ]; then
  stable_seen=$(number "$(field stableSequence "$record")")
  dev_seen=$(number "$(field devSequence "$record")")
  legacy=$(number "$(field sequence "$record")")
  case $(field channel "$record") in
    stable) [ "$legacy" -le "$stable_seen" ] || stable_seen=$legacy ;;
    dev) [ "$legacy" -le "$dev_seen" ] || dev_seen=$legacy ;;
  esac
fi

if [ -z "$pin" ]; then
  fetch "channels/$channel.json" "$tmp/pointer.json"
  field payload "$tmp/pointer.json" | tr -d '\n' >"$tmp/payload.b64"
  field signature "$tmp/pointer.json" | tr -d '\n' >"$tmp/pointer.sig"
  openssl base64 -d -A -in "$tmp/payload.b64" -out "$tmp/payload.json" 2>/dev/null || die "the $channel pointer is malformed"
  verify "$tmp/payload.json" "$tmp/pointer.sig" "the $channel channel pointer"
  [ "$(field channel "$tmp/payload.json")" = "$channel" ] || die "the pointer at channels/$channel.json is signed for the $(field channel "$tmp/payload.json") channel, not $channel; nothing was installed"
  version=$(field version "$tmp/payload.json")
  sequence=$(field sequence "$tmp/payload.json")
  manifest_sha=$(field manifestSha256 "$tmp/payload.json")
  case $sequence in '' | *[!0-9]*) die "the $channel pointer has no sequence" ;; esac
  if [ "$channel" = stable ]; then seen=$stable_seen; else seen=$dev_seen; fi
  [ "$sequence" -ge "$seen" ] || die "the $channel pointer (sequence $sequence) is older than the one this installation accepted (sequence $seen): a replayed pointer; nothing was installed"
  if [ "$channel" = stable ]; then stable_seen=$sequence; else dev_seen=$sequence; fi
else
  version=$pin
  sequence=0
  manifest_sha=
fi
printf '%s\n' "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$' || die "the pointer names no valid version"

release=releases/v$version
fetch "$release/manifest.json" "$tmp/manifest.json"
fetch "$release/manifest.json.sig" "$tmp/manifest.sig"
verify "$tmp/manifest.json" "$tmp/manifest.sig" "the v$version manifest"
if [ -n "$manifest_sha" ] && [ "$(sha256 "$tmp/manifest.json")" != "$manifest_sha" ]; then
  die "the v$version manifest is not the one the $channel pointer names; nothing was installed"
fi
[ "$(field version "$tmp/manifest.json")" = "$version" ] || die "the v$version manifest names another version"
archive=ze-harness-$version-$platform.$ext
expected=$(grep -F "\"name\":\"$archive\"" "$tmp/manifest.json" | sed -n 's/.*"sha256":"\([0-9a-f]*\)".*/\1/p' | head -n 1)
[ -n "$expected" ] || die "v$version has no archive for $platform"
size=$(grep -F "\"name\":\"$archive\"" "$tmp/manifest.json" | sed -n 's/.*"size":\([0-9]*\).*/\1/p' | head -n 1)
case $size in '' | 0 | *[!0-9]*) die "the v$version manifest gives no size for $archive; nothing was installed" ;; esac
fetch "$release/$archive" "$tmp/$archive" "$size"
[ "$(sha256 "$tmp/$archive")" = "$expected" ] || die "$archive does not match the SHA-256 in the signed manifest; nothing was installed"

mkdir -p "$tmp/x"
if [ "$ext" = zip ]; then
  command -v unzip >/dev/null 2>&1 || die "unzip is required"
  unzip -q "$tmp/$archive" -d "$tmp/x"
else
  tar -xzf "$tmp/$archive" -C "$tmp/x"
fi
unpacked=$tmp/x/ze-harness-$version-$platform
[ -f "$unpacked/ze-harness" ] && [ -x "$unpacked/ze-harness" ] || die "$archive holds no ze-harness executable"

# The launcher path must be free or ours: an unmanaged executable there is moved aside by hand.
if [ -e "$launcher" ] || [ -L "$launcher" ]; then
  case $(readlink "$launcher" 2>/dev/null || true) in
    "$versions"/*) ;;
    *) die "$launcher exists and is not this installer's launcher: move it aside, then install again" ;;
  esac
fi

mkdir -p "$versions" "$bindir"
rm -rf "$versions/.$version.partial"
mv "$unpacked" "$versions/.$version.partial"
rm -rf "$versions/$version"
mv "$versions/.$version.partial" "$versions/$version"
ln -s "$versions/$version/ze-harness" "$bindir/.ze-harness.$$"
mv -f "$bindir/.ze-harness.$$" "$launcher"

if [ -n "$pin" ]; then
  channel_json=null pin_json="\"$pin\"" auto=false
else
  channel_json="\"$channel\"" pin_json=null auto=true
fi
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
cat >"$record.$$.tmp" <<EOF
{
  "channel": $channel_json,
  "pin": $pin_json,
  "version": "$version",
  "sequence": $sequence,
  "stableSequence": $stable_seen,
  "devSequence": $dev_seen,
  "launcher": "$(esc "$launcher")",
  "origin": "$(esc "$origin")",
  "auto": $auto
}
EOF
mv -f "$record.$$.tmp" "$record"
cp "$tmp/cert.pem" "$data/release-cert.pem"
rm -f "$data/staged.json"

if [ "$modify_path" = 1 ]; then
  case ${SHELL:-} in
    */zsh) profile=$HOME/.zshrc ;;
    */bash) profile=$HOME/.bashrc ;;
    *) profile=$HOME/.profile ;;
  esac
  line="export PATH=\"$bindir:\$PATH\""
  if ! grep -qsF "$line" "$profile"; then
    printf '\n# Ze Harness\n%s\n' "$line" >>"$profile"
    say "Added $bindir to PATH in $profile; open a new terminal to use ze-harness."
  fi
fi

if [ -n "$pin" ]; then
  say "Installed Ze Harness $version (pinned) at $launcher."
else
  say "Installed Ze Harness $version ($channel channel) at $launcher."
fi

if [ "$restart_daemon" = 1 ]; then
  "$launcher" service restart --if-idle >/dev/null || say "The local daemon was not restarted; run \`ze-harness service restart\` when its Turns finish."
fi
