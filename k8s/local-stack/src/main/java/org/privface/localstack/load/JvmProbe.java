package org.privface.localstack.load;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.tools.attach.VirtualMachine;

/**
 * A JVM of the run seen through its own management beans: the harness attaches (Attach API, same
 * user, loopback), starts the JVM's local JMX agent and reads or drives its MemoryMXBean. Used to
 * force a full GC and read the heap right after it, the JVM's live set, without a jcmd process per
 * sample.
 */
final class JvmProbe implements AutoCloseable {
    private final JMXConnector connector;
    private final MemoryMXBean memory;

    private JvmProbe(JMXConnector connector, MemoryMXBean memory) {
        this.connector = connector;
        this.memory = memory;
    }

    static JvmProbe attach(long pid) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(address));
        return new JvmProbe(c, ManagementFactory.newPlatformMXBeanProxy(c.getMBeanServerConnection(),
                ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class));
    }

    /** Runs a full GC (System.gc()) in the JVM and returns its used heap right after, in bytes; NaN on failure. */
    double heapAfterFullGc() {
        try {
            memory.gc();
            return memory.getHeapMemoryUsage().getUsed();
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    @Override
    public void close() {
        try {
            connector.close();
        } catch (IOException e) {
            // the JVM is gone
        }
    }
}
