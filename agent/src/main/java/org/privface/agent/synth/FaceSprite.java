package org.privface.agent.synth;

import static org.privface.agent.synth.SpriteCanvas.arc;
import static org.privface.agent.synth.SpriteCanvas.blend;
import static org.privface.agent.synth.SpriteCanvas.concatRev;
import static org.privface.agent.synth.SpriteCanvas.ellipsePts;
import static org.privface.agent.synth.SpriteCanvas.fillPoly;
import static org.privface.agent.synth.SpriteCanvas.fp;
import static org.privface.agent.synth.SpriteCanvas.mop;
import static org.privface.agent.synth.SpriteCanvas.multiply3;
import static org.privface.agent.synth.SpriteCanvas.paintEllipse;
import static org.privface.agent.synth.SpriteCanvas.paintMask;
import static org.privface.agent.synth.SpriteCanvas.paintPoly;
import static org.privface.agent.synth.SpriteCanvas.polyMask;
import static org.privface.agent.synth.SpriteCanvas.pt2;
import static org.privface.agent.synth.SpriteCanvas.pt;
import static org.privface.agent.synth.SpriteCanvas.rampMat;
import static org.privface.agent.synth.SpriteCanvas.rotate;
import static org.privface.agent.synth.SpriteCanvas.roundedRect;
import static org.privface.agent.synth.SpriteCanvas.scale;
import static org.privface.agent.synth.SpriteCanvas.scalePts;
import static org.privface.agent.synth.SpriteCanvas.shade;
import static org.privface.agent.synth.SpriteCanvas.shadeEllipse;
import static org.privface.agent.synth.SpriteCanvas.shadeMaskEdge;
import static org.privface.agent.synth.SyntheticFaces.B;
import static org.privface.agent.synth.SyntheticFaces.CH;
import static org.privface.agent.synth.SyntheticFaces.CW;
import static org.privface.agent.synth.SyntheticFaces.CX;
import static org.privface.agent.synth.SyntheticFaces.CY;
import static org.privface.agent.synth.SyntheticFaces.HAIR_STYLES;
import static org.privface.agent.synth.SyntheticFaces.SHIFT;
import static org.privface.agent.synth.SyntheticFaces.luma;

import java.util.ArrayList;
import java.util.List;

import org.opencv.core.Core;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Point;
import org.opencv.core.Scalar;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.synth.SpriteCanvas.Canvas;
import org.privface.agent.synth.SyntheticFaces.Identity;
import org.privface.agent.synth.SyntheticFaces.Variation;

/**
 * Draws one synthetic face on a {@link SpriteCanvas.Canvas}: the face oval with its soft shading,
 * eyes, brows, nose, mouth, hair, beard and glasses, from an {@link SyntheticFaces.Identity} and a
 * {@link SyntheticFaces.Variation}.
 */
final class FaceSprite {
    private FaceSprite() {
    }

    static Canvas drawSprite(Identity id, Variation v, Variation scene) {
        Canvas c = new Canvas();
        Scalar skin = new Scalar(id.skinB(), id.skinG(), id.skinR());
        c.skinTone = skin;
        double b = B;
        double a = B * id.faceWidth();
        double yaw = v.yaw();
        double dx = yaw * 0.10 * a; // feature shift for a small head turn
        Scalar hair = new Scalar(id.hairB(), id.hairG(), id.hairR());
        String style = HAIR_STYLES[id.hairStyle()];
        List<Point> face = facePts(id, a, b);

        double eyeY = id.eyeY() * b;
        double browY = eyeY - id.browGap() * b - v.browRaise() * 0.04 * b;
        double noseY = eyeY + id.noseLen() * b;
        double mouthY = id.mouthY() * b;

        // 1. hair behind the head
        if (style.equals("long")) {
            List<Point> back = new ArrayList<>();
            back.addAll(arc(0, -0.05 * b, a * 1.14, b * 1.02, 180, 360, 24));
            back.add(pt(a * 1.22, 0.9 * b));
            back.add(pt(a * 1.05, 1.30 * b));
            back.add(pt(-a * 1.05, 1.30 * b));
            back.add(pt(-a * 1.22, 0.9 * b));
            paintPoly(c, back, 2, hair, 1, true);
        }
        // 2. shirt / shoulders
        List<Point> torso = new ArrayList<>();
        torso.add(pt(-0.5 * a, 1.05 * b));
        torso.add(pt(0.5 * a, 1.05 * b));
        torso.addAll(arc(1.3 * a, 1.75 * b, 0.9 * a, 0.55 * b, 270, 360, 10));
        torso.add(pt(2.3 * a, (CH - CY) + 5));
        torso.add(pt(-2.3 * a, (CH - CY) + 5));
        torso.addAll(arc(-1.3 * a, 1.75 * b, 0.9 * a, 0.55 * b, 180, 270, 10));
        paintPoly(c, torso, 2, new Scalar(v.shirtB(), v.shirtG(), v.shirtR()), 1, true);
        // 3. neck, shadowed under the chin
        List<Point> neck = List.of(pt(-0.42 * a, 0.4 * b), pt(0.42 * a, 0.4 * b), pt(0.46 * a, 1.2 * b),
                pt(-0.46 * a, 1.2 * b));
        paintPoly(c, neck, 1.5, scale(skin, 0.88), 1, true);
        shadeEllipse(c, 0, 1.02 * b, 0.6 * a, 0.18 * b, 8, 0.7);
        // 4. ears
        for (int side = -1; side <= 1; side += 2) {
            double ex = side * a * 0.96 - dx * 0.6;
            double sz = id.earSize() * (1 - 0.15 * yaw * side);
            List<Point> ear = ellipsePts(ex, eyeY + 0.16 * b, 0.15 * a * sz, 0.24 * b * sz, 0, 24);
            paintPoly(c, ear, 1.5, scale(skin, 0.93), 1, true);
            shadeEllipse(c, ex, eyeY + 0.16 * b, 0.07 * a * sz, 0.14 * b * sz, 3, 0.8);
        }
        // 5. face oval and broad 3-D shading
        paintPoly(c, face, 1.2, skin, 1, true);
        Mat faceMask = polyMask(face);
        Mat inner = polyMask(scalePts(face, 0.78, 0.82, 0, -0.05 * b));
        Mat rim = new Mat();
        Core.subtract(faceMask, inner, rim);
        shade(c, rim, 12, 0.88);
        rim.release();
        inner.release();
        // Darker skin gets stronger relative shading, so that the absolute contrasts the cascade
        // measures (and which survive histogram equalisation) stay comparable to those of light skin.
        double dark = Math.max(0, Math.min(1, (200 - luma(skin)) / 100));
        // cheeks and forehead catch the light; this bright band under the eyes matters for Haar
        for (int side = -1; side <= 1; side += 2) {
            shadeEllipse(c, side * 0.45 * a + dx, eyeY + 0.18 * b, 0.28 * a, 0.12 * b, 9, 1.12 + 0.12 * dark);
        }
        shadeEllipse(c, dx * 0.5, -0.45 * b, 0.5 * a, 0.2 * b, 12, 1.06);
        // eye sockets: broad soft darkening covering brow to lower lid
        for (int side = -1; side <= 1; side += 2) {
            double ex = side * id.eyeSep() * a + dx;
            double top = browY - 0.02 * b;
            double bot = eyeY + 0.07 * b;
            shadeEllipse(c, ex - side * 0.1 * id.eyeW() * a, (top + bot) / 2,
                    id.eyeW() * a * 1.5, (bot - top) / 2, 5, 0.5 - 0.12 * dark);
        }
        // nose bridge highlight between the sockets, side shadows and tip
        double noseTipX = dx * 1.7;
        List<Point> bridge = List.of(pt(dx - 0.05 * a, browY), pt(dx + 0.05 * a, browY),
                pt(noseTipX + 0.07 * a, noseY - 0.05 * b), pt(noseTipX - 0.07 * a, noseY - 0.05 * b));
        shade(c, polyMask(bridge), 5, 1.16 + 0.14 * dark);
        for (int side = -1; side <= 1; side += 2) {
            double shadowStrength = 0.84 - 0.06 * yaw * side;
            List<Point> ns = List.of(pt(dx + side * 0.09 * a, eyeY + 0.02 * b),
                    pt(dx + side * 0.13 * a, eyeY + 0.02 * b),
                    pt(noseTipX + side * (id.noseW() * a + 0.02 * a), noseY - 0.02 * b),
                    pt(noseTipX + side * (id.noseW() * a - 0.04 * a), noseY - 0.04 * b));
            shade(c, polyMask(ns), 3.5, shadowStrength);
        }
        shadeEllipse(c, noseTipX, noseY + 0.06 * b, id.noseW() * a * 1.1, 0.05 * b, 4, 0.80);
        shadeEllipse(c, noseTipX, noseY - 0.05 * b, id.noseW() * a * 0.55, 0.06 * b, 4, 1.12);
        // light from one side darkens the other half of the face
        Mat side = rampMat(CW, CH, CX, CY, a, scene.lightAngle(), v.faceShading(), 1.0);
        multiply3(c.img, side);
        side.release();

        // 6. beard (before the mouth, which is painted over it)
        if (id.beard() > 0) {
            drawBeard(c, id, faceMask, a, b, noseY, mouthY, dx, hair);
        }
        faceMask.release();

        // 7. nostrils
        for (int sd = -1; sd <= 1; sd += 2) {
            double nx = noseTipX + sd * id.noseW() * a * 0.5;
            shadeEllipse(c, nx, noseY + 0.015 * b, id.noseW() * a * 0.28, 0.028 * b, 1.5, 0.45);
        }

        // 8. eyes
        Scalar iris = new Scalar(id.irisB(), id.irisG(), id.irisR());
        for (int sd = -1; sd <= 1; sd += 2) {
            double ex = sd * id.eyeSep() * a + dx;
            double ew = id.eyeW() * a * (1 + 0.08 * yaw * sd);
            double eh = ew * id.eyeH() * v.eyeOpen();
            double tilt = -sd * id.eyeTilt();
            drawEye(c, ex, eyeY, ew, eh, tilt, iris, yaw, skin);
        }

        // 9. eyebrows
        Scalar brow = blend(hair, scale(skin, 0.35), 0.5); // brows stay darker than skin even for blond hair
        for (int sd = -1; sd <= 1; sd += 2) {
            double ex = sd * id.eyeSep() * a + dx;
            double ew = id.eyeW() * a * 1.25;
            List<Point> top = new ArrayList<>();
            List<Point> bottom = new ArrayList<>();
            int n = 16;
            for (int i = 0; i <= n; i++) {
                double t = -1 + 2.0 * i / n; // -1 inner .. 1 outer
                double x = ex + sd * t * ew;
                double yc = browY - id.browArch() * 0.07 * b * (1 - t * t) - id.browTilt() * 0.05 * b * t
                        - v.browRaise() * 0.015 * b * (1 - t);
                double th = id.browThick() * b * (t < 0 ? 1.0 : 1.0 - 0.6 * t);
                top.add(pt(x, yc - th * 0.5));
                bottom.add(0, pt(x, yc + th * 0.5));
            }
            top.addAll(bottom);
            paintPoly(c, top, 1.8, brow, 0.92, false);
        }

        // 10. mouth
        drawMouth(c, id, v, mouthY, dx * 1.2, a, b, skin);

        // 11. hair in front
        drawHair(c, id, style, a, b, hair);

        // 12. glasses
        if (id.glasses() > 0) {
            drawGlasses(c, id, a, b, eyeY, dx);
        }
        return c;
    }

    static void drawEye(Canvas c, double ex, double ey, double ew, double eh, double tilt,
            Scalar iris, double yaw, Scalar skin) {
        List<Point> eye = new ArrayList<>();
        int n = 24;
        for (int i = 0; i <= n; i++) { // upper lid
            double t = -1 + 2.0 * i / n;
            eye.add(pt(ex + t * ew, ey - eh * Math.pow(1 - t * t, 0.7)));
        }
        for (int i = n - 1; i > 0; i--) { // lower lid, flatter
            double t = -1 + 2.0 * i / n;
            eye.add(pt(ex + t * ew, ey + eh * 0.65 * Math.pow(1 - t * t, 0.9)));
        }
        eye = rotate(eye, ex, ey, tilt);
        Mat eyeMask = polyMask(eye);
        // sclera is off-white and shaded, never brighter than the skin highlight
        Scalar sclera = blend(new Scalar(205, 210, 215), skin, 0.45);
        paintMask(c, eyeMask, 0.8, sclera, 0.95, false);
        double ir = ew * 0.55;
        double ix = ex + yaw * 0.12 * ew;
        Mat irisMask = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(irisMask, ellipsePts(ix, ey, ir, ir, 0, 24));
        Core.bitwise_and(irisMask, eyeMask, irisMask);
        paintMask(c, irisMask, 0.8, iris, 1, false);
        Mat pupil = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(pupil, ellipsePts(ix, ey, ir * 0.48, ir * 0.48, 0, 16));
        Core.bitwise_and(pupil, eyeMask, pupil);
        paintMask(c, pupil, 0.8, new Scalar(12, 12, 14), 1, false);
        pupil.release();
        irisMask.release();
        shadeEllipse(c, ex, ey - eh * 0.5, ew, eh * 0.7, 2, 0.7); // lid shadow on the eyeball
        eyeMask.release();
        paintEllipse(c, ix + ir * 0.3, ey - ir * 0.3, ir * 0.16, ir * 0.16, 0.8, new Scalar(245, 245, 245), 0.9);
        // upper lid line with lashes, thicker toward the outer corner
        List<Point> lid = new ArrayList<>();
        for (int i = 0; i <= n; i++) {
            double t = -1 + 2.0 * i / n;
            lid.add(pt(ex + t * ew * 1.05, ey - eh * Math.pow(1 - t * t, 0.7) - 1.5));
        }
        for (int i = n; i >= 0; i--) {
            double t = -1 + 2.0 * i / n;
            lid.add(pt(ex + t * ew * 1.05, ey - eh * Math.pow(1 - t * t, 0.7) - 4.5 - 1.5 * (1 - t * t)));
        }
        paintPoly(c, rotate(lid, ex, ey, tilt), 1.0, new Scalar(25, 25, 35), 0.9, false);
    }

    static void drawMouth(Canvas c, Identity id, Variation v, double my, double mx, double a, double b,
            Scalar skin) {
        double mw = id.mouthW() * a;
        double lip = id.lipThick() * b;
        double smile = v.smile();
        double open = v.mouthOpen() * 0.14 * b;
        int n = 24;
        List<Point> upperTop = new ArrayList<>();
        List<Point> slitTop = new ArrayList<>();
        List<Point> slitBot = new ArrayList<>();
        List<Point> lowerBot = new ArrayList<>();
        for (int i = 0; i <= n; i++) {
            double t = -1 + 2.0 * i / n;
            double x = mx + t * mw;
            double yc = my - smile * 0.06 * b * t * t + smile * 0.015 * b;
            double bow = 1 - 0.35 * Math.exp(-(t * t) / 0.02); // cupid's bow dip
            upperTop.add(pt(x, yc - lip * Math.sqrt(Math.max(0, 1 - t * t)) * bow - 0.5));
            double o = open * (1 - t * t);
            slitTop.add(pt(x, yc - o * 0.3));
            slitBot.add(pt(x, yc + o * 0.7));
            lowerBot.add(pt(x, yc + o * 0.7 + lip * 1.25 * Math.sqrt(Math.max(0, 1 - t * t)) + 0.5));
        }
        Scalar lipCol = new Scalar(skin.val[0] * 0.72, skin.val[1] * (0.70 - 0.08 * id.lipRed()),
                skin.val[2] * (0.82 + 0.06 * id.lipRed()));
        paintPoly(c, concatRev(upperTop, slitTop), 1.2, scale(lipCol, 0.92), 1, false);
        paintPoly(c, concatRev(slitBot, lowerBot), 1.2, lipCol, 1, false);
        // highlight on the lower lip, shadow below it
        shadeEllipse(c, mx, my + open * 0.7 + lip * 0.5, mw * 0.4, lip * 0.3, 2, 1.08);
        shadeEllipse(c, mx, my + open * 0.7 + lip * 1.8, mw * 0.55, lip * 0.5, 4, 0.85);
        if (open > 0.5) {
            paintPoly(c, concatRev(slitTop, slitBot), 0.8, new Scalar(35, 30, 55), 1, false);
            if (open > 0.05 * b) { // upper teeth
                List<Point> teeth = new ArrayList<>();
                for (int i = 3; i <= n - 3; i++) {
                    teeth.add(slitTop.get(i));
                }
                for (int i = n - 3; i >= 3; i--) {
                    Point p = slitTop.get(i);
                    double t = -1 + 2.0 * i / n;
                    teeth.add(pt2(p.x, p.y + open * 0.35 * (1 - t * t)));
                }
                paintPoly(c, teeth, 0.8, new Scalar(200, 205, 210), 0.9, false);
            }
        }
        // the dark line where the lips meet
        List<Point> line = new ArrayList<>(slitTop);
        for (int i = n; i >= 0; i--) {
            Point p = slitTop.get(i);
            line.add(pt2(p.x, p.y + 2.0 + 1.5 * (1 - Math.abs(-1 + 2.0 * i / n))));
        }
        paintPoly(c, line, 1.0, new Scalar(30, 25, 45), 0.85, false);
    }

    static void drawHair(Canvas c, Identity id, String style, double a, double b, Scalar hair) {
        if (style.equals("bald")) {
            // horseshoe of short hair around the sides and back only
            for (int sd = -1; sd <= 1; sd += 2) {
                List<Point> p = List.of(pt(sd * a * 1.02, -0.35 * b), pt(sd * a * 0.86, -0.30 * b),
                        pt(sd * a * 0.86, 0.05 * b), pt(sd * a * 1.04, 0.05 * b));
                paintPoly(c, p, 3, hair, 0.8, true);
            }
            shadeEllipse(c, -0.2 * a, -0.75 * b, 0.35 * a, 0.12 * b, 8, 1.12); // scalp shine
            return;
        }
        double vol = id.hairVolume();
        double capA = a * (1.06 + 0.06 * vol);
        double capB = b * (1.04 + 0.06 * vol);
        double capCy = -0.02 * b;
        if (style.equals("curly")) {
            capA = a * (1.18 + 0.1 * vol);
            capB = b * (1.12 + 0.08 * vol);
        }
        if (style.equals("buzz")) {
            capA = a * 1.02;
            capB = b * 1.015;
        }
        Mat cap = Mat.zeros(CH, CW, CvType.CV_8UC1);
        fillPoly(cap, ellipsePts(0, capCy, capA, capB, 0, 64));
        if (style.equals("curly")) {
            for (int i = 0; i < 22; i++) { // curls along the outline
                double t = Math.PI + Math.PI * i / 21.0;
                double r = 0.13 * a;
                fillPoly(cap, ellipsePts(capA * Math.cos(t), capCy + capB * Math.sin(t) + 0.1 * b, r, r, 0, 12));
            }
        }
        // keep only what lies above the hairline
        List<Point> above = new ArrayList<>();
        double hl = id.hairline() * b;
        double part = style.equals("side") ? (id.index() % 2 == 0 ? 1 : -1) : 0;
        int n = 40;
        for (int i = 0; i <= n; i++) {
            double u = -1.3 + 2.6 * i / n;
            double x = u * a;
            double uu = Math.min(Math.abs(u), 1.0);
            double y;
            if (style.equals("fringe")) {
                y = hl + 0.08 * b * uu * uu + 0.02 * b * Math.sin(u * 17); // ragged bangs
            } else {
                y = hl + 0.34 * b * uu * uu + 0.10 * b * part * u;
                if (style.equals("long")) {
                    y -= 0.07 * b * Math.exp(-u * u / 0.01); // centre part
                }
            }
            if (Math.abs(u) > 0.92 && !style.equals("fringe")) {
                y = Math.max(y, 0.02 * b); // sideburns down to ear top
            }
            above.add(pt(x, y));
        }
        above.add(pt(1.6 * a, -1.6 * b));
        above.add(pt(-1.6 * a, -1.6 * b));
        Mat keep = polyMask(above);
        Core.bitwise_and(cap, keep, cap);
        keep.release();
        if (style.equals("long")) {
            for (int sd = -1; sd <= 1; sd += 2) { // strands framing the face
                List<Point> p = List.of(pt(sd * a * 1.16, -0.3 * b), pt(sd * a * 0.86, -0.3 * b),
                        pt(sd * a * 0.90, 0.55 * b), pt(sd * a * 1.2, 0.9 * b));
                fillPoly(cap, p);
            }
        }
        double opacity = style.equals("buzz") ? 0.85 : 1.0;
        paintMask(c, cap, 2.0, hair, opacity, true);
        // volume: darker near the edge of the hair mass, highlight on top
        shadeMaskEdge(c, cap, 0.8);
        shadeEllipse(c, -0.25 * a, -0.85 * b, 0.4 * a, 0.12 * b, 8, 1.25);
        cap.release();
    }

    static void drawBeard(Canvas c, Identity id, Mat faceMask, double a, double b, double noseY,
            double mouthY, double dx, Scalar hair) {
        Mat m = Mat.zeros(CH, CW, CvType.CV_8UC1);
        switch (id.beard()) {
            case 1, 2 -> { // stubble / full beard: below a line from the mouth corners up to the sideburns
                List<Point> p = new ArrayList<>();
                double mst = mouthY - id.lipThick() * b - 0.06 * b;
                double corner = mouthY - 0.02 * b;
                double side = id.eyeY() * b + 0.32 * b;
                double mu = id.mouthW() + 0.06;
                for (int i = 0; i <= 40; i++) {
                    double u = -1.2 + 2.4 * i / 40;
                    double uu = Math.min(1, Math.abs(u));
                    double y = uu < mu ? mst + (corner - mst) * Math.pow(uu / mu, 4)
                            : corner + (side - corner) * (uu - mu) / (1 - mu);
                    p.add(pt(u * a + dx, y));
                }
                p.add(pt(1.4 * a, 1.5 * b));
                p.add(pt(-1.4 * a, 1.5 * b));
                fillPoly(m, p);
                Core.bitwise_and(m, faceMask, m);
            }
            case 3 -> { // moustache
                fillPoly(m, ellipsePts(dx * 1.2, mouthY - id.lipThick() * b - 0.035 * b, id.mouthW() * a * 1.05,
                        0.035 * b, 0, 24));
            }
            default -> { // goatee
                fillPoly(m, ellipsePts(dx * 1.2, mouthY - id.lipThick() * b - 0.04 * b, id.mouthW() * a * 1.0,
                        0.045 * b, 0, 24));
                fillPoly(m, ellipsePts(dx * 1.2, mouthY + 0.2 * b, id.mouthW() * a * 0.8, 0.22 * b, 0, 24));
                Core.bitwise_and(m, faceMask, m);
            }
        }
        // Kept translucent: dense dark beards hide the mouth and cheek contrasts the cascade needs.
        double opacity = id.beard() == 1 ? 0.3 : 0.5;
        Scalar col = blend(scale(hair, 0.8), scale(c.skinTone, 0.5), 0.3); // darker than scalp hair
        paintMask(c, m, id.beard() == 1 ? 6 : 3, col, opacity, false);
        m.release();
    }

    static void drawGlasses(Canvas c, Identity id, double a, double b, double eyeY, double dx) {
        double ew = id.eyeW() * a * 1.55;
        double eh = id.eyeW() * a * (id.glasses() == 1 ? 1.2 : 0.9);
        Scalar frame = new Scalar(30, 30, 35);
        Mat m = Mat.zeros(CH, CW, CvType.CV_8UC1);
        int thick = Math.max(2, (int) Math.round(0.03 * a)); // thickness is not fixed-point
        for (int sd = -1; sd <= 1; sd += 2) {
            double ex = sd * id.eyeSep() * a + dx;
            List<Point> rim = id.glasses() == 1 ? ellipsePts(ex, eyeY + 0.02 * b, ew * 0.85, eh * 0.85, 0, 32)
                    : roundedRect(ex, eyeY + 0.02 * b, ew, eh);
            Imgproc.polylines(m, List.of(mop(rim)), true, new Scalar(255), thick, Imgproc.LINE_AA, SHIFT);
            double outer = ex + sd * ew * (id.glasses() == 1 ? 0.85 : 1.0);
            Imgproc.line(m, fp(outer, eyeY), fp(sd * a * 0.98, eyeY - 0.02 * b), new Scalar(255), thick,
                    Imgproc.LINE_AA, SHIFT);
        }
        double in = id.eyeSep() * a - ew * (id.glasses() == 1 ? 0.85 : 1.0);
        Imgproc.line(m, fp(dx - in, eyeY - 0.02 * b), fp(dx + in, eyeY - 0.02 * b), new Scalar(255), thick,
                Imgproc.LINE_AA, SHIFT);
        paintMask(c, m, 0.8, frame, 0.95, false);
        m.release();
    }

    static List<Point> facePts(Identity id, double a, double b) {
        List<Point> pts = new ArrayList<>();
        int n = 96;
        for (int k = 0; k < n; k++) {
            double t = 2 * Math.PI * k / n;
            double cs = Math.cos(t), sn = Math.sin(t);
            double e = sn > 0 ? id.chinPow() : 2.2;
            double x = a * Math.signum(cs) * Math.pow(Math.abs(cs), 2 / e);
            double y = b * Math.signum(sn) * Math.pow(Math.abs(sn), 2 / e);
            if (sn > 0) {
                x *= 1 - id.jaw() * sn * sn;
            }
            pts.add(pt(x, y));
        }
        return pts;
    }
}
