package org.privface.agent.publish;

/** What a full {@link DiskSpool} does with an entry that does not fit. */
public enum DropPolicy {
    /** Refuse the new entry; everything already spooled is kept. */
    DROP_NEWEST,
    /**
     * Discard the oldest unacknowledged entries to make room. Space is reclaimed a whole segment at a
     * time, so one eviction may discard up to a segment's worth of entries (segments are at most a
     * quarter of the bound).
     */
    DROP_OLDEST
}
