package org.privface.agent;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.Micronaut;

/** The camera-gateway agent. With {@code agent.exit-when-done} it processes its sources and exits. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) throws Exception {
        ApplicationContext ctx = Micronaut.run(Application.class, args);
        AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
        if (ctx.getBean(AgentSettings.class).isExitWhenDone()) {
            boolean ok = pipeline.awaitCompletion();
            ctx.close();
            System.exit(ok ? 0 : 1);
        }
    }
}
