package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.Sharing;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The elastic allowance rule alone: windows in, a level out, no threads and no clock. */
class AllowanceTest {
    private static final Allowance.Window IDLE = new Allowance.Window(false, false, false, false, false);
    private static final Allowance.Window LEARNING = new Allowance.Window(true, true, false, false, false);
    private static final Allowance.Window MET = new Allowance.Window(true, false, false, false, true);
    private static final Allowance.Window MET_TIGHT = new Allowance.Window(true, false, false, false, false);
    private static final Allowance.Window MISSED = new Allowance.Window(true, false, true, false, false);
    private static final Allowance.Window SEVERE = new Allowance.Window(true, false, true, true, false);

    /** Windows met with room to spare and the whole allowance used, until the level is {@code level}. */
    private static void growTo(Allowance a, int level) {
        while (a.level() < level) {
            assertThat(a.next(MET, a.level(), true, 100)).isTrue();
        }
    }

    @Test
    void itStartsAtTheFloorAndStaysThereWhileAnObjectiveIsLearned() {
        var a = new Allowance();
        assertThat(a.level()).isEqualTo(1);
        assertThat(a.state()).isEqualTo(Sharing.State.LEARNING);
        growTo(a, 5);
        assertThat(a.next(LEARNING, 5, true, 100)).isFalse();
        assertThat(a.level()).isEqualTo(1);
        assertThat(a.state()).isEqualTo(Sharing.State.LEARNING);
    }

    @Test
    void withoutRegularWorkItGetsAllTheRoomAtOnce() {
        var a = new Allowance();
        assertThat(a.next(IDLE, 0, false, 12))
                .as("not a try: nothing to judge it by")
                .isFalse();
        assertThat(a.level()).isEqualTo(12);
        assertThat(a.state()).isEqualTo(Sharing.State.IDLE);
    }

    @Test
    void itGrowsByOneOnlyWhenMetWithSpareAndUsedWhole() {
        var a = new Allowance();
        assertThat(a.next(MET, 1, true, 10)).isTrue();
        assertThat(a.level()).isEqualTo(2);
        assertThat(a.next(MET, 1, false, 10)).as("not all used").isFalse();
        assertThat(a.next(MET_TIGHT, 2, true, 10)).as("met without spare").isFalse();
        assertThat(a.level()).isEqualTo(2);
        assertThat(a.state()).isEqualTo(Sharing.State.OBJECTIVE_MET);
    }

    @Test
    void aMissHalvesWhatWasUsedAndASevereOneGoesToTheFloor() {
        var a = new Allowance();
        growTo(a, 8);
        assertThat(a.next(MISSED, 6, true, 100)).isFalse();
        assertThat(a.level()).as("half of the 6 used, not of the 8 allowed").isEqualTo(3);
        assertThat(a.state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
        var b = new Allowance();
        growTo(b, 8);
        b.next(SEVERE, 8, true, 100);
        assertThat(b.level()).isEqualTo(1);
    }

    @Test
    void aLevelThatMissedIsTriedAgainAfterTwoFourAndUpToSixtyFourWindows() {
        var a = new Allowance();
        growTo(a, 4);
        int[] expected = {2, 4, 8, 16, 32, 64, 64};
        for (int wait : expected) {
            a.next(MISSED, 4, true, 100); // 4 missed: back to 2
            assertThat(a.level()).isEqualTo(2);
            assertThat(a.next(MET, 2, true, 100)).isTrue(); // 3 is below the level that missed
            for (int i = 0; i < wait; i++) {
                assertThat(a.next(MET, 3, true, 100))
                        .as("window %d of %d", i + 1, wait)
                        .isFalse();
                assertThat(a.state()).isEqualTo(Sharing.State.BACKING_OFF);
                assertThat(a.level()).isEqualTo(3);
            }
            assertThat(a.next(MET, 3, true, 100))
                    .as("after %d windows, 4 again", wait)
                    .isTrue();
            assertThat(a.level()).isEqualTo(4);
        }
    }

    @Test
    void theLevelThatMissedIsForgottenOnceItMeets() {
        var a = new Allowance();
        growTo(a, 4);
        a.next(MISSED, 4, true, 100);
        a.next(MET, 2, true, 100);
        for (int i = 0; i < 2; i++) {
            a.next(MET, 3, true, 100);
        }
        assertThat(a.next(MET, 3, true, 100)).isTrue();
        assertThat(a.next(MET, 4, true, 100))
                .as("4 met: 5 at once, no back-off")
                .isTrue();
        assertThat(a.level()).isEqualTo(5);
    }

    @Test
    void aMissAboveTheLowestLevelThatMissedKeepsItsBackOff() {
        var a = new Allowance();
        growTo(a, 4);
        a.next(MISSED, 4, true, 100); // 4 missed: 2, and 4 waits 2 windows
        a.next(IDLE, 0, false, 10); // all the room while regular work is away: 10
        assertThat(a.level()).isEqualTo(10);
        a.next(SEVERE, 10, true, 100); // 10 missed, above 4: 4 and its back-off stand
        assertThat(a.level()).isEqualTo(1);
        a.next(MET, 1, true, 100);
        a.next(MET, 2, true, 100);
        assertThat(a.level()).isEqualTo(3);
        for (int i = 0; i < 2; i++) {
            assertThat(a.next(MET, 3, true, 100)).isFalse();
            assertThat(a.state()).isEqualTo(Sharing.State.BACKING_OFF);
        }
        assertThat(a.next(MET, 3, true, 100)).isTrue();
        assertThat(a.level()).isEqualTo(4);
    }

    @Test
    void neverMoreThanTheRoom() {
        var a = new Allowance();
        growTo(a, 6);
        assertThat(a.next(MET, 6, true, 6)).isFalse();
        assertThat(a.state()).isEqualTo(Sharing.State.NO_ROOM);
        a.next(MET, 6, true, 4);
        assertThat(a.level()).as("the room shrank").isEqualTo(4);
    }

    @Test
    void overAnyWindowsTheLevelStaysWithinOneAndTheRoomAndGrowsOneAtATime() {
        var random = new Random(42);
        Allowance.Window[] windows = {IDLE, LEARNING, MET, MET_TIGHT, MISSED, SEVERE};
        var a = new Allowance();
        for (int i = 0; i < 100_000; i++) {
            int before = a.level();
            var window = windows[random.nextInt(windows.length)];
            int room = 1 + random.nextInt(16);
            boolean grew = a.next(window, random.nextInt(20), random.nextBoolean(), room);
            assertThat(a.level()).isBetween(1, room);
            assertThat(grew).isEqualTo(window != IDLE && a.level() > before);
            if (grew) {
                assertThat(a.level()).isEqualTo(before + 1);
            }
        }
    }
}
