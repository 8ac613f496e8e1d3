#!/bin/sh
# Makes a Wine prefix that runs Go >= 1.24 programs: creates it (wineboot)
# and installs the ProcessPrng shim (prng.c) as bcryptprimitives.dll in its
# system32. Usage: prefix.sh DIR. Idempotent; needs wine64 and
# x86_64-w64-mingw32-gcc (Debian: wine64, gcc-mingw-w64-x86-64-win32).
set -eu
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
dll="$prefix/drive_c/windows/system32/bcryptprimitives.dll"
[ -f "$dll" ] && exit 0
mkdir -p "$prefix"
WINEPREFIX=$prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" wineboot --init >/dev/null 2>&1
tmp=$(mktemp -d)
x86_64-w64-mingw32-gcc -shared -O2 -o "$tmp/bcryptprimitives.dll" "$here/prng.c" -ladvapi32
cp "$tmp/bcryptprimitives.dll" "$dll.tmp"
mv "$dll.tmp" "$dll"
rm -rf "$tmp"
