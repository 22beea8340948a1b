#!/usr/bin/env sh
# Builds the jeton command and installs it: PREFIX/bin/jeton and PREFIX/share/jeton/jeton.jar.
# PREFIX is the first argument, else $PREFIX, else ~/.local. Needs a JDK 17+ and Maven to build,
# a Java 17+ runtime to run.
set -e
prefix=${1:-${PREFIX:-$HOME/.local}}
root=$(cd "$(dirname "$0")" && pwd)
echo "building the jeton command (mvn package)..."
log=$(mktemp)
# The command needs its jar only: no javadoc or sources jars (they take a while).
if ! (cd "$root" && mvn -q -B -Dstyle.color=never -DskipTests -Dmaven.javadoc.skip \
    -Dmaven.source.skip -pl jeton-cli -am package \
    </dev/null >"$log" 2>&1); then
  cat "$log" >&2 # Maven's output is shown on failure only
  rm -f "$log"
  exit 1
fi
rm -f "$log"
mkdir -p "$prefix/bin" "$prefix/share/jeton"
# New files renamed into place, so that a jeton running meanwhile never sees half a file.
cp "$root/jeton-cli/target/jeton.jar" "$prefix/share/jeton/.jeton.jar.new"
mv -f "$prefix/share/jeton/.jeton.jar.new" "$prefix/share/jeton/jeton.jar"
cp "$root/jeton" "$prefix/bin/.jeton.new"
chmod 755 "$prefix/bin/.jeton.new"
mv -f "$prefix/bin/.jeton.new" "$prefix/bin/jeton"
echo "installed $prefix/bin/jeton"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "add $prefix/bin to your PATH, for example: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
