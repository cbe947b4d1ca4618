package io.streamgen.conformance;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.kstream.BranchedKStream;
import org.apache.kafka.streams.kstream.CogroupedKStream;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KGroupedTable;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.SessionWindowedCogroupedKStream;
import org.apache.kafka.streams.kstream.SessionWindowedKStream;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.TimeWindowedCogroupedKStream;
import org.apache.kafka.streams.kstream.TimeWindowedKStream;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * Lists the public methods of Kafka Streams' DSL, one line per class and method name
 * ("KStream#filter"), overloads folded, with " deprecated" when every overload is. The
 * conformance runner checks docs/coming-from-kafka-streams.md has a row for each, so a
 * method that a Kafka Streams upgrade adds cannot go unanswered. The list comes from the jar
 * on the classpath, by reflection, so it is the version the suite runs against.
 */
final class DslMethods {
    /** The DSL's interfaces: every public method is something a user may call. */
    private static final List<Class<?>> INTERFACES = List.of(
            KStream.class, KTable.class, KGroupedStream.class, KGroupedTable.class,
            TimeWindowedKStream.class, SessionWindowedKStream.class, CogroupedKStream.class,
            TimeWindowedCogroupedKStream.class, SessionWindowedCogroupedKStream.class,
            BranchedKStream.class);

    /** The window classes: their constructors (static factories) and the methods that tune them. */
    private static final List<Class<?>> WINDOWS = List.of(
            TimeWindows.class, SessionWindows.class, SlidingWindows.class, JoinWindows.class);

    /** Methods of the window classes that describe a window rather than build one. */
    private static final List<String> NOT_BUILDERS = List.of(
            "equals", "hashCode", "toString", "windowsFor", "size", "gracePeriodMs", "inactivityGap",
            "timeDifferenceMs", "beforeMs", "afterMs", "retentionPeriod");

    private DslMethods() {}

    static void print() {
        Map<String, Boolean> deprecated = new TreeMap<>();
        for (Class<?> c : INTERFACES) {
            for (Method m : c.getMethods()) {
                if (m.getDeclaringClass() != Object.class && !Modifier.isStatic(m.getModifiers())) {
                    add(deprecated, c, m);
                }
            }
        }
        for (Class<?> c : WINDOWS) {
            for (Method m : c.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && !NOT_BUILDERS.contains(m.getName())) {
                    add(deprecated, c, m);
                }
            }
        }
        deprecated.forEach((name, dep) -> System.out.println(dep ? name + " deprecated" : name));
    }

    /** Records c#m; the name stays deprecated only while every overload seen is. */
    private static void add(Map<String, Boolean> deprecated, Class<?> c, Method m) {
        boolean dep = m.isAnnotationPresent(Deprecated.class);
        deprecated.merge(c.getSimpleName() + "#" + m.getName(), dep, Boolean::logicalAnd);
    }
}
