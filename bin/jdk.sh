# Sourced by the scripts in bin/ and by .ci/run: exports JAVA_HOME pointing at a JDK 21 or newer.
# Order: $JAVA_HOME if it is 21+, else the newest JDK 21+ under /usr/lib/jvm (or /Library/Java on macOS).

db_bulkhead_java_major() { # prints the feature version of the JDK at $1, or nothing
    [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
    "$1/bin/java" -XshowSettings:properties -version 2>&1 \
        | sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1
}

db_bulkhead_find_jdk() {
    if [ -n "${JAVA_HOME:-}" ]; then
        v=$(db_bulkhead_java_major "$JAVA_HOME")
        if [ -n "$v" ] && [ "$v" -ge 21 ]; then return 0; fi
        echo "note: JAVA_HOME=$JAVA_HOME is not a JDK 21+ (${v:-no java/javac there}); looking for another" >&2
    fi
    best= best_v=0
    for d in /usr/lib/jvm/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
        [ -d "$d" ] || continue
        v=$(db_bulkhead_java_major "$d")
        if [ -n "$v" ] && [ "$v" -ge 21 ] && [ "$v" -gt "$best_v" ]; then best=$d best_v=$v; fi
    done
    if [ -z "$best" ]; then
        echo "error: db-bulkhead needs a JDK 21 or newer (java and javac)." >&2
        echo "       None found in JAVA_HOME or under /usr/lib/jvm. Install one (e.g. 'apt-get install openjdk-21-jdk'" >&2
        echo "       or Temurin 21/25) and set JAVA_HOME to it." >&2
        return 1
    fi
    export JAVA_HOME=$best
}

db_bulkhead_find_jdk || exit 1
export PATH="$JAVA_HOME/bin:$PATH"

# Maven's own Guice calls sun.misc.Unsafe; JDK 24+ warns about it on every build. Quiet, not our code.
if [ "$(db_bulkhead_java_major "$JAVA_HOME")" -ge 24 ]; then
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
fi
