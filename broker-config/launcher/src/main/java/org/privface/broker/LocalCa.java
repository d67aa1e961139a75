package org.privface.broker;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaMiscPEMGenerator;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObjectGenerator;

/**
 * A certificate authority made at start-up for a broker on 127.0.0.1: the CA's certificate as PEM
 * (what clients trust) and the broker's key and certificate chain as PEM, its certificate signed
 * by the CA for IP 127.0.0.1. EC P-256 keys from the JDK, certificates built and signed in-process
 * with Bouncy Castle (the JDK has no public API to build one; keytool, one JVM per step, took
 * 8-9 s). The CA's private key is never written anywhere: nothing else can be signed with it once
 * this returns. The CA file lands in a directory only the owner can read.
 *
 * @param brokerKeyPem   the broker's private key, PKCS#8 PEM (Kafka's {@code ssl.keystore.key})
 * @param brokerChainPem the broker's certificate and the CA's (Kafka's {@code ssl.keystore.certificate.chain})
 */
public record LocalCa(Path caPem, String brokerKeyPem, String brokerChainPem) {
    private static final Duration VALIDITY = Duration.ofDays(7);

    public static LocalCa create(Path dir) throws IOException {
        Files.createDirectories(dir);
        try {
            Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException e) {
            // not POSIX: the temporary directory is the only protection
        }
        try {
            SecureRandom random = new SecureRandom();
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), random);
            KeyPair ca = g.generateKeyPair();
            KeyPair broker = g.generateKeyPair();
            // A minute back: a client whose clock is slightly behind still accepts the certificates.
            Date from = Date.from(Instant.now().minusSeconds(60));
            Date to = Date.from(Instant.now().plus(VALIDITY));
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X500Name caName = new X500Name("CN=privface local CA");
            X509v3CertificateBuilder caBuilder = new JcaX509v3CertificateBuilder(caName, serial(random), from, to, caName,
                    ca.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(ca.getPublic()));
            X509CertificateHolder caCert = caBuilder.build(signer(ca.getPrivate()));
            X509v3CertificateBuilder brokerBuilder = new JcaX509v3CertificateBuilder(caName, serial(random), from, to,
                    new X500Name("CN=127.0.0.1"), broker.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(
                            new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
                    .addExtension(Extension.subjectAlternativeName, false,
                            new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")))
                    .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(broker.getPublic()))
                    .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca.getPublic()));
            X509CertificateHolder brokerCert = brokerBuilder.build(signer(ca.getPrivate()));
            String caPemText = pem(new JcaMiscPEMGenerator(caCert));
            Path caPem = dir.resolve("ca.pem");
            Files.writeString(caPem, caPemText);
            return new LocalCa(caPem, pem(new JcaPKCS8Generator(broker.getPrivate(), null)),
                    pem(new JcaMiscPEMGenerator(brokerCert)) + caPemText);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("making the local CA: " + e.getMessage(), e);
        }
    }

    private static BigInteger serial(SecureRandom random) {
        return new BigInteger(127, random).add(BigInteger.ONE); // positive, at most 16 bytes (RFC 5280)
    }

    private static org.bouncycastle.operator.ContentSigner signer(PrivateKey key) throws OperatorCreationException {
        return new JcaContentSignerBuilder("SHA256withECDSA").build(key);
    }

    private static String pem(PemObjectGenerator object) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(object);
        }
        return out.toString();
    }

    @Override
    public String toString() {
        return "LocalCa[" + caPem + "]"; // never the key
    }
}
