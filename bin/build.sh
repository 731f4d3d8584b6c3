# Sourced by bin/db-bulkhead, bin/spring-service and bin/spring-jpa: builds one module's executable jar once, and again only when a
# source or POM it depends on changed, showing each module as Maven starts it and a dot per 50 downloads.
# Usage: build_once JAR MODULE DIR... (DIRs relative to the repository: whose src/main and pom.xml count)
build_once() {
    local jar=$1 module=$2
    shift 2
    local watched=("$repo/pom.xml")
    for dir in "$@"; do
        watched+=("$repo/$dir/pom.xml" "$repo/$dir/src/main")
    done
    if [ -f "$jar" ] && [ -z "$(find "${watched[@]}" -newer "$jar" -print -quit 2>/dev/null)" ]; then
        return 0
    fi
    echo "$(basename "$0"): building $module once (the first time, Maven downloads the dependencies)" >&2
    mkdir -p "$repo/$module/target"
    local log=$repo/$module/target/build.log status
    set +e
    (cd "$repo" && ./mvnw -B -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip -pl "$module" -am package) 2>&1 \
        | tee "$log" | awk '
        /^\[INFO\] Building db-bulkhead/ {
            printf "%s  building %s\n", (dots ? "\n" : ""), ($4 ~ /SNAPSHOT/ ? "parent" : $4); dots = 0; fflush()
        }
        /Downloaded from/ { if (++n % 50 == 0) { printf "."; dots = 1; fflush() } }
        END { if (dots) print "" }' >&2
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        grep -E "^\[ERROR\]" "$log" | head -n 20 >&2
        echo "$(basename "$0"): the build failed; the whole output is in $log" >&2
        exit 2
    fi
}
