package org.privface.agent.publish;

/** Why a {@link DiskSpool} lost or refused entries; every such entry is counted under one reason. */
public enum DropReason {
    /** DROP_NEWEST and the spool is at its bound: the new entry was refused. */
    FULL,
    /** DROP_OLDEST and the spool is at its bound: stored, unacknowledged entries were discarded. */
    EVICTED,
    /** The entry alone, with its framing and a segment header, is larger than the bound. */
    TOO_LARGE,
    /** Writing failed (typically "No space left on device"); the entry was not stored. */
    IO_ERROR,
    /** A stored entry failed its checksum and was discarded. */
    CORRUPT
}
