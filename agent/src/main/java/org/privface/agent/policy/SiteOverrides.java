package org.privface.agent.policy;

import io.micronaut.context.annotation.EachProperty;
import io.micronaut.context.annotation.Parameter;

/** {@code agent.sites.<site>.*}: one shared configuration file can carry every site's settings. */
@EachProperty("agent.sites")
public class SiteOverrides extends PolicyOverride {
    private final String site;

    public SiteOverrides(@Parameter String site) {
        this.site = site;
    }

    public String site() {
        return site;
    }
}
