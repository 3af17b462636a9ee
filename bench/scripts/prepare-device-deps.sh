#!/usr/bin/env bash
# Run here, before a GPU-machine call: copies the header-only CLI11 and GoogleTest's sources (which
# the GPU machine lacks) into .device-deps/ (git-ignored). Name .device-deps in the call's carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .device-deps && mkdir -p .device-deps/cli11
cp -r /usr/include/CLI .device-deps/cli11/
cp -r /usr/src/googletest .device-deps/googletest
# The GPU machine's .git is this session's first commit with the tree laid over it, so it cannot name the
# commit it builds. Recorded here: the commit (git describe) and the tree's hash, untracked files included and
# ignored ones not, as the device tool copies them; device-check.sh hashes its tree the same way and records
# the commit only where the two agree (prepare again after any change).
idx=$(mktemp -u)
tree=$(GIT_INDEX_FILE=$idx git -c core.fileMode=false -c core.autocrlf=false add -A . && GIT_INDEX_FILE=$idx git write-tree)
rm -f "$idx"
describe=$(git describe --always --dirty --abbrev=12)
# An untracked file changes the tree but not what --dirty looks at.
[ -n "$(git status --porcelain)" ] && [[ "$describe" != *-dirty ]] && describe+=-dirty
printf 'describe %s\ntree %s\n' "$describe" "$tree" >.device-deps/source.txt
cat .device-deps/source.txt
du -sh .device-deps
