package org.privface.agent.image;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.opencv.opencv_java;

/** Loads OpenCV's natives once and finds the cascades shipped inside the OpenCV package. */
public final class OpenCv {
    private static volatile boolean loaded;

    private OpenCv() {
    }

    /** Makes the official {@code org.opencv} API usable; safe to call from any thread, any number of times. */
    public static void load() {
        if (!loaded) {
            synchronized (OpenCv.class) {
                if (!loaded) {
                    Loader.load(opencv_java.class);
                    loaded = true;
                }
            }
        }
    }

    /**
     * A cascade from the package's resources, e.g. {@code haarcascades/haarcascade_frontalface_default.xml}
     * or {@code lbpcascades/lbpcascade_frontalface_improved.xml}, extracted to JavaCPP's cache.
     */
    public static File cascade(String relativePath) {
        load();
        String resource = "/org/bytedeco/opencv/" + Loader.getPlatform() + "/share/opencv4/" + relativePath;
        try {
            File f = Loader.cacheResource(resource);
            if (f == null) {
                throw new IllegalArgumentException("no cascade " + relativePath + " in the OpenCV package");
            }
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract cascade " + relativePath, e);
        }
    }
}
